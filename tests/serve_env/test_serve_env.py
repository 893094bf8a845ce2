"""`arena serve-env`: OpenEnv's protocol, checked with openenv-core's own client and validator
(in their own venv, over a real socket on 127.0.0.1) and, for the edges, in process."""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path
from typing import Iterator

import pytest
from fastapi.testclient import TestClient

from serve_env.app import build_app
from serve_env.environment import ServeConfig
from tests.local_server import serve_in_thread

TEST_HOSTS = ["testserver"]  # TestClient's Host: a name the server must be told about (--allowed-host)
from tests.serve_env.openenv_venv import openenv_python

CLIENT_SCRIPT = Path(__file__).with_name("openenv_client_play.py")


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with serve_in_thread(build_app(ServeConfig(allowed_hosts=TEST_HOSTS))) as url:
        yield url


@pytest.mark.slow  # the client venv's imports (gradio, fastmcp) take several seconds
def test_openenv_client_plays_seeded_episodes(server_url: str) -> None:
    episodes = [
        {"reset": {"game": "tictactoe", "seed": 3, "seat": 1, "opponents": ["bot"], "name": "client-a"}},
        {"reset": {"game": "tictactoe", "seed": 3, "seat": 1, "opponents": ["bot"], "name": "client-a"}},
        {"reset": {"game": "liars_dice", "seed": 5, "seat": 2, "opponents": ["random", "bot"]}, "pick": "last"},
        {"reset": {"game": "liars_dice", "seed": 5, "seat": 2, "opponents": ["random", "bot"]}, "pick": "last"},
        {"reset": {"game": "textarena:TicTacToe-v0", "seed": 2, "opponents": ["random"]}},
        {"reset": {"game": "textarena:TicTacToe-v0", "seed": 2, "opponents": ["random"]}},
        {"reset": {"game": "tictactoe", "seed": 0}, "bad_first": True},
    ]
    done = subprocess.run([openenv_python(), str(CLIENT_SCRIPT), server_url, json.dumps(episodes)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert all("failed" not in r for r in results), results
    native, native_again, dice, dice_again, ta, ta_again, hot = results
    for a, b in ((native, native_again), (dice, dice_again), (ta, ta_again)):  # seeds reproduce whole episodes
        assert a["steps"] == b["steps"] and a["state"]["game_state"] == b["state"]["game_state"]
    for result, seat in ((native, 1), (dice, 2), (ta, 0)):
        first, last = result["steps"][0], result["steps"][-1]
        assert first["observation"]["seat"] == seat and first["observation"]["rules"]
        assert all(s["observation"]["player"] == seat for s in result["steps"][:-1])
        assert last["done"] and last["reward"] == last["observation"]["outcome"]["scores"][seat]
        assert all(s["reward"] == 0.0 for s in result["steps"][:-1])
        assert result["state"]["done"] and result["state"]["game_state"]
        assert "episode is over" in result["errors"][0] and "EXECUTION_ERROR" in result["errors"][0]
    assert dice["steps"][0]["observation"]["game_id"] == "liars_dice" and len(dice["steps"][-1]["observation"]["outcome"]["scores"]) == 3
    rejected = hot["steps"][1]["observation"]
    assert rejected["attempt"] == 1 and "not a cell" in rejected["feedback"] and rejected["player"] == 0
    assert [s["observation"]["player"] for s in hot["steps"][2:5]] == [1, 0, 1]  # hot-seat names whose turn


@pytest.mark.slow
def test_openenv_validator_passes(server_url: str) -> None:
    openenv = str(Path(openenv_python()).with_name("openenv"))
    done = subprocess.run([openenv, "validate", "--url", server_url], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert '"passed": true' in done.stdout


def ws_exchange(client: TestClient, *messages: dict | str) -> list[dict]:
    replies = []
    with client.websocket_connect("/ws") as ws:
        for message in messages:
            ws.send_text(message if isinstance(message, str) else json.dumps(message))
            replies.append(json.loads(ws.receive_text()))
    return replies


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(build_app(ServeConfig(allowed_hosts=TEST_HOSTS, max_message_bytes=4096))) as c:
        yield c


@pytest.mark.parametrize(
    "data, code, words",
    [
        ({"game": "tictactoee"}, "EXECUTION_ERROR", "unknown game 'tictactoee'; did you mean tictactoe"),
        ({"game": "tictactoe", "seat": 2, "opponents": ["bot"]}, "EXECUTION_ERROR", "seat 2 does not exist"),
        ({"game": "tictactoe", "opponents": ["bot,depth=3"]}, "EXECUTION_ERROR", "unknown parameter(s) depth"),
        ({"game": "tictactoe", "opponents": ["hf:Qwen/Qwen2.5-0.5B-Instruct"]}, "EXECUTION_ERROR", "policy kind 'hf' is not served here"),
        ({"game": "tictactoe", "opponents": ["human"]}, "EXECUTION_ERROR", "policy kind 'human' is not served here"),
        ({"game": "tictactoe", "sead": 1}, "VALIDATION_ERROR", "sead: Extra inputs are not permitted"),
        ({"game": "tictactoe", "seed": -1}, "VALIDATION_ERROR", "seed: Input should be greater than or equal to 0"),
    ],
)
def test_bad_resets_are_one_clear_error_and_the_session_lives_on(client: TestClient, data: dict, code: str, words: str) -> None:
    error, good = ws_exchange(client, {"type": "reset", "data": data}, {"type": "reset", "data": {"seed": 1}})
    assert error["type"] == "error" and error["data"]["code"] == code and words in error["data"]["message"]
    assert good["type"] == "observation" and good["data"]["observation"]["game_id"] == "tictactoe"


def test_protocol_errors(client: TestClient) -> None:
    replies = ws_exchange(
        client, "{not json", {"type": "dance"}, {"type": "step", "data": {"move": "4"}},
        {"type": "reset", "data": {"seed": 1, "opponents": ["bot"]}}, {"type": "step", "data": {"mvoe": "4"}},
        {"type": "step", "data": {"move": "x" * 5000}},
    )
    codes = [r["data"]["code"] for r in replies if r["type"] == "error"]
    assert codes == ["INVALID_JSON", "UNKNOWN_TYPE", "EXECUTION_ERROR", "VALIDATION_ERROR", "VALIDATION_ERROR"]
    assert "call reset first" in replies[2]["data"]["message"] and "over 4096 bytes" in replies[5]["data"]["message"]


def test_capacity_and_idle_timeout() -> None:
    with TestClient(build_app(ServeConfig(allowed_hosts=TEST_HOSTS, max_sessions=1, idle_timeout=1.0))) as small:
        with small.websocket_connect("/ws") as first:
            first.send_text(json.dumps({"type": "reset", "data": {"seed": 0}}))
            assert json.loads(first.receive_text())["type"] == "observation"
            with small.websocket_connect("/ws") as second:
                refused = json.loads(second.receive_text())
            assert refused["data"]["code"] == "CAPACITY_REACHED" and refused["data"]["max_sessions"] == 1
            closed = json.loads(first.receive_text())  # nothing sent for over a second
            assert closed["data"]["code"] == "SESSION_ERROR" and "without a message" in closed["data"]["message"]
        with small.websocket_connect("/ws") as third:  # the slot was given back
            third.send_text(json.dumps({"type": "state"}))
            assert json.loads(third.receive_text())["type"] == "state"


def test_http_endpoints(client: TestClient) -> None:
    assert client.get("/health").json() == {"status": "healthy"}
    meta = client.get("/metadata").json()
    assert meta["supports_concurrent_sessions"] and meta["max_concurrent_envs"] == 64
    schema = client.get("/schema").json()
    assert schema["action"]["properties"]["move"]["type"] == "string" and "legal_moves" in schema["observation"]["properties"]
    reset = client.post("/reset", json={"game": "kuhn_poker", "seed": 4, "opponents": ["bot"]}).json()
    assert reset["done"] is False and reset["observation"]["legal_moves"]
    assert client.post("/reset", json={"game": "nope"}).status_code == 400
    step = client.post("/step", json={"action": {"move": "4"}})
    assert step.status_code == 400 and "WS /ws" in step.json()["detail"]
    assert client.post("/reset", content=b"x" * 5000, headers={"content-type": "application/json"}).status_code == 413
    chunked = client.post("/reset", content=iter([b"{" + b" " * 3000, b" " * 3000 + b"}"]), headers={"content-type": "application/json"})
    assert chunked.status_code == 413 and "over 4096 bytes" in chunked.json()["detail"]
    assert client.get("/state").json()["step_count"] == 0


def test_db_stores_finished_episodes_as_rated_league_matches(tmp_path: Path) -> None:
    from league.outside_play import OutsidePlay
    from league.store import Store

    store = Store(f"sqlite:///{tmp_path / 'arena.db'}")
    store.upsert_policy("champion", "bot")
    outside = OutsidePlay(store, "outside", rerate_every_s=0.0)
    config = ServeConfig(allowed_hosts=TEST_HOSTS, outside=outside)
    with TestClient(build_app(config)) as app:
        with app.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"type": "reset", "data": {"name": "champion", "opponents": ["bot"]}}))
            assert "belongs to a league policy" in json.loads(ws.receive_text())["data"]["message"]
            for opponents in (["champion"], ["random"], None):
                ws.send_text(json.dumps({"type": "reset", "data": {"seed": 2, "name": "my-agent", "opponents": opponents}}))
                reply = json.loads(ws.receive_text())["data"]
                while not reply["done"]:
                    ws.send_text(json.dumps({"type": "step", "data": {"move": reply["observation"]["legal_moves"][0]}}))
                    reply = json.loads(ws.receive_text())["data"]
                assert (reply["observation"]["match_id"] is None) == (opponents is None)  # hot-seat rates nothing
    league_id = store.league_id("outside")
    seats = sorted(tuple(r.players) for r in store.results(league_id))
    assert seats == [("my-agent", "champion"), ("my-agent", "random")]
    assert store.policy("my-agent").spec == "serve-env:my-agent"
    assert {row.policy for row in store.snapshots(league_id, "tictactoe")} >= {"my-agent", "champion"}


def test_consecutive_sessions_ask_for_the_same_opponent() -> None:
    app = build_app(ServeConfig(allowed_hosts=TEST_HOSTS))
    with TestClient(app) as shared:
        for _ in range(2):
            reply, = ws_exchange(shared, {"type": "reset", "data": {"seed": 1, "opponents": ["random,seed=z"]}})
            assert reply["type"] == "observation"


def test_errors_sent_to_clients_and_logged_hold_no_secret(client: TestClient, monkeypatch, caplog) -> None:
    """A client's spec may carry a key, and an exception's text may quote a URL: what the client
    reads (WS and HTTP) and what the server logs, traceback included, are redacted."""
    from serve_env.environment import ArenaEnvironment

    leaky = "openai:m,base_url=http://user:pw-serve-4411@127.0.0.1:9/v1"
    error, = ws_exchange(client, {"type": "reset", "data": {"opponents": [leaky]}})
    assert error["data"]["code"] == "EXECUTION_ERROR" and "http://***@127.0.0.1:9/v1" in error["data"]["message"]
    http = client.post("/reset", json={"opponents": [leaky]})
    assert http.status_code == 400 and "***" in http.json()["detail"]

    def broken_state(self):
        raise RuntimeError("store at postgresql://arena:pw-serve-5522@db/arena said api_key=zq-serve-key-6633")

    monkeypatch.setattr(ArenaEnvironment, "state", broken_state)
    with caplog.at_level(logging.ERROR, logger="serve_env.app"):
        internal, = ws_exchange(client, {"type": "state"})
    assert internal["data"]["message"].startswith("internal error: RuntimeError: store at postgresql://***@db/arena")
    assert "Traceback" in caplog.text and "RuntimeError: store at postgresql://***@db/arena said api_key=***" in caplog.text
    for text in (json.dumps(error), http.text, json.dumps(internal), caplog.text):
        for secret in ("pw-serve-4411", "pw-serve-5522", "zq-serve-key-6633"):
            assert secret not in text
