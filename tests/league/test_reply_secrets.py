"""A secret an agent echoes in a normal 200 reply never reaches a sink (issue 56, finding 5).

An outside agent sent `Authorization: Bearer $AGENT_BADGE` (a variable whose name says nothing,
holding a value of no known shape: only the value remembered from `token_env=` can catch it)
answers every first attempt with its token in the move (invalid: the game's feedback quotes it)
and every retry with a legal move. A league plays it; then the store's files
(WAL included), `arena export --kind records`, the match pages and `/api/matches/ID` are searched
for the token, and so is `arena play --save`'s JSON. What the game received is not masked: it
judged the real reply.
"""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest
from typer.testing import CliRunner

from league.config import GameEntry, LeagueConfig, PolicyEntry
from league.runner import run_league
from league.store import Store
from llm_arena_cli.app import app

TOKEN = "zq-agent-Badge-4e1d77"  # no secret-like shape, and AGENT_BADGE is no secret-like name
TOKEN_ENV = "AGENT_BADGE"


class EchoingAgent(BaseHTTPRequestHandler):
    """Echoes the bearer token it was sent in each first attempt's move; retries play a legal move."""

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        token = self.headers.get("authorization", "").removeprefix("Bearer ")
        move = f"my token is {token}" if request["attempt"] == 0 else request["legal_moves"][0]
        body = json.dumps({"move": move}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def agent_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), EchoingAgent)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/move"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def league_db(agent_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    patch = pytest.MonkeyPatch()
    patch.setenv(TOKEN_ENV, TOKEN)
    db_path = tmp_path_factory.mktemp("echo") / "echo.db"
    config = LeagueConfig(
        name="echo", seed=3, matches_per_pair=2, concurrency=2, games=[GameEntry(id="tictactoe")],
        policies=[PolicyEntry(name="echo-agent", spec=f"http:{agent_url},token_env={TOKEN_ENV}"), PolicyEntry(name="bot", spec="bot")],
    )
    try:
        store = Store(f"sqlite:///{db_path}")
        asyncio.run(run_league(config, store))
        store.close()
        yield db_path
    finally:
        patch.undo()


def test_the_store_holds_no_echoed_token_but_the_replies_are_kept(league_db: Path) -> None:
    for path in sorted(league_db.parent.glob(league_db.name + "*")):  # every table and column, WAL included
        assert TOKEN.encode() not in path.read_bytes(), f"the token is in {path.name}"
    with Store(f"sqlite:///{league_db}") as store:
        turns = [t for r in store.iter_records() for t in r.turns if t.policy == "echo-agent"]
    assert any(t.raw == t.action == "my token is ***" and not t.valid and "'my token is ***'" in t.feedback for t in turns)  # the game quoted it
    assert any(t.valid for t in turns)


async def test_the_game_is_given_the_reply_as_it_came(agent_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.match import play_match
    from arena.policy import make_policy
    from games.registry import make_game

    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    game, given = make_game("tictactoe"), []
    step = game.step
    monkeypatch.setattr(game, "step", lambda player, action: given.append(action) or step(player, action))
    agent = make_policy(f"http:{agent_url},token_env={TOKEN_ENV}")
    try:
        record = await play_match(game, [agent, make_policy("bot")], seed=1)
    finally:
        await agent.close()
    assert given[0] == f"my token is {TOKEN}"  # the game judged the real reply...
    assert record.turns[0].action == record.turns[0].raw == "my token is ***"  # ...the record keeps it masked
    assert TOKEN not in record.to_json()


def test_the_records_export_holds_no_echoed_token(league_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    result = CliRunner().invoke(app, ["export", "--kind", "records", "--out", str(out), "--db", f"sqlite:///{league_db}"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "my token is ***" in text and TOKEN not in text


def test_the_match_pages_hold_no_echoed_token(league_db: Path) -> None:
    from fastapi.testclient import TestClient

    from web.app import create_app

    db = f"sqlite:///{league_db}"
    with Store(db) as store:
        match_ids = store.match_ids()
    assert match_ids
    with TestClient(create_app(db)) as client:
        for match_id in match_ids:
            for path in (f"/matches/{match_id}", f"/api/matches/{match_id}"):
                response = client.get(path)
                assert response.status_code == 200 and "***" in response.text, path
                assert TOKEN not in response.text, path


def test_arena_play_save_holds_no_echoed_token(agent_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    saved = tmp_path / "match.json"
    result = CliRunner().invoke(app, ["play", "tictactoe", "-p", f"http:{agent_url},token_env={TOKEN_ENV}", "-p", "bot", "--save", str(saved)])
    assert result.exit_code == 0, result.output
    assert TOKEN not in result.output and "***" in result.output  # the terminal shows the turns as they are recorded
    text = saved.read_text()
    assert "my token is ***" in text and TOKEN not in text
