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


def test_web_shows_no_secret_of_a_store_it_cannot_open(tmp_path, monkeypatch):
    """SQLAlchemy hides a URL's password but quotes its query string in its errors; a driver's
    error may quote more. Both lines `arena web` prints for a bad store are redacted."""
    monkeypatch.chdir(tmp_path)
    Store("sqlite:///there.db").close()
    secrets = ("pw-web-4411", "zq-web-token-9911")
    cases = {  # a file that exists behind a URL SQLite cannot use; a file that does not exist
        f"sqlite://user:{secrets[0]}@/there.db?token={secrets[1]}": "error: cannot open the league store: ArgumentError: Invalid SQLite URL",
        f"sqlite:///missing.db?token={secrets[1]}": "error: no league store at sqlite:///missing.db?token=***",
    }
    for url, expected in cases.items():
        result = CliRunner().invoke(app, ["web", "--db", url, "--port", "1"])
        assert result.exit_code == 2 and result.stderr.startswith(expected), result.stderr
        assert "***" in result.stderr and not any(secret in result.stderr for secret in secrets)
