"""`arena web` reads only: a store that does not exist is refused in one line (exit 2, nothing
created), and an empty one answers / with a page that says how to start a league."""

from __future__ import annotations

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from league.store import Store
from llm_arena_cli.app import app
from web.app import create_app


def test_web_refuses_a_store_that_does_not_exist(tmp_path):
    typo = tmp_path / "fresh.db"
    result = CliRunner().invoke(app, ["web", "--db", f"sqlite:///{typo}", "--port", "1"])
    assert result.exit_code == 2
    assert result.stderr.strip().startswith(f"error: no league store at sqlite:///{typo}") and "\n" not in result.stderr.strip()
    assert not typo.exists()


def test_an_empty_store_shows_how_to_start_a_league(tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    Store(url).close()
    with TestClient(create_app(url)) as client:
        page = client.get("/")
    assert page.status_code == 200
    assert "No leagues yet" in page.text and f"arena league run examples/demo-league.yaml --db {url}" in page.text
