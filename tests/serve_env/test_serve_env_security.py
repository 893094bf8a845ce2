"""serve-env under a hostile client (issue 56): a game that loops or grows, foreign pages, one client
taking every slot, nested JSON and seeds the store cannot hold. Each test reproduces one finding.

The misbehaving games are test-only (tests/test_game_guard.py), so these hold whatever the shipped
games' option schemas allow."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from typer.testing import CliRunner

from serve_env.app import build_app
from serve_env.environment import ServeConfig
from tests.test_game_guard import make_test_game

TEST_HOSTS = ["testserver"]  # TestClient's Host
DEEP = "[" * 5000 + "]" * 5000


def app_client(**config: Any) -> TestClient:
    return TestClient(build_app(ServeConfig(allowed_hosts=TEST_HOSTS, game_factory=make_test_game, **config)))


def ws_exchange(client: TestClient, *messages: dict | str) -> list[dict]:
    with client.websocket_connect("/ws") as ws:
        replies = []
        for message in messages:
            ws.send_text(message if isinstance(message, str) else json.dumps(message))
            replies.append(json.loads(ws.receive_text()))
    return replies


def test_a_looping_game_ends_its_session_while_health_and_another_session_answer() -> None:
    with app_client(game_call_timeout=0.5) as client:
        replies: list[dict] = []

        def looping_session() -> None:
            replies.extend(ws_exchange(client, {"type": "reset", "data": {"game": "looping", "opponents": ["random"], "seed": 1}},
                                       {"type": "step", "data": {"move": "5"}}))

        worker = threading.Thread(target=looping_session, daemon=True)
        started = time.monotonic()
        worker.start()
        health_latencies = []
        while worker.is_alive() and time.monotonic() - started < 10:
            t0 = time.monotonic()
            assert client.get("/health").json() == {"status": "healthy"}
            health_latencies.append(time.monotonic() - t0)
            time.sleep(0.05)
        worker.join(1)
        assert not worker.is_alive()
        assert replies[1]["type"] == "error"
        assert "looping: game call step took over 0.5s: episode ended" in replies[1]["data"]["message"]
        assert len(health_latencies) >= 3 and max(health_latencies) < 0.4
        other = ws_exchange(client, {"type": "reset", "data": {"seed": 1, "opponents": ["bot"]}}, {"type": "step", "data": {"move": "4"}})
        assert [r["type"] for r in other] == ["observation", "observation"]


def test_a_huge_view_ends_the_session_by_the_view_cap_and_by_the_reply_cap() -> None:
    with app_client() as client:  # default view cap: 512 KiB
        error, = ws_exchange(client, {"type": "reset", "data": {"game": "huge", "opponents": ["random"]}})
        assert error["type"] == "error" and "over max_view_bytes=524288: episode ended" in error["data"]["message"]
        http = client.post("/reset", json={"game": "huge", "opponents": ["random"]})
        assert http.status_code == 400 and "max_view_bytes" in http.json()["detail"]
    with app_client(max_view_bytes=8 << 20, max_reply_bytes=64 * 1024) as client:
        with client.websocket_connect("/ws") as ws:
            ws.send_text(json.dumps({"type": "reset", "data": {"game": "huge", "opponents": ["random"]}}))
            error = json.loads(ws.receive_text())
            assert "over the server's --max-reply-kb=64: episode ended" in error["data"]["message"]
            with pytest.raises(WebSocketDisconnect):  # the session is over
                ws.receive_text()
        http = client.post("/reset", json={"game": "huge", "opponents": ["random"]})
        assert http.status_code == 400 and "--max-reply-kb=64" in http.json()["detail"]


def test_foreign_host_and_origin_are_refused_and_tools_without_origin_pass() -> None:
    with app_client() as client:
        for headers in ({"origin": "http://evil.example"}, {"host": "evil.example"}):
            with pytest.raises(WebSocketDisconnect) as refused:
                with client.websocket_connect("/ws", headers=headers):
                    pass
            assert refused.value.code == 1008
            http = client.post("/reset", json={"seed": 1}, headers=headers)
            assert http.status_code == 403 and ("cross-origin" in http.json()["detail"] or "not a name" in http.json()["detail"])
        assert client.get("/health", headers={"host": "evil.example"}).status_code == 403
        assert client.post("/reset", json={"seed": 1}).status_code == 200
        assert ws_exchange(client, {"type": "reset", "data": {"seed": 1}})[0]["type"] == "observation"
    with app_client(allowed_origins=["http://app.example:3000"]) as client:
        assert client.post("/reset", json={"seed": 1}, headers={"origin": "http://app.example:3000"}).status_code == 200


def test_one_client_cannot_hold_every_session_and_a_stateless_reset_counts() -> None:
    with app_client(max_sessions_per_client=2, max_sessions=10) as client:
        with client.websocket_connect("/ws") as first, client.websocket_connect("/ws") as second:
            with client.websocket_connect("/ws") as third:
                refused = json.loads(third.receive_text())
            assert refused["data"]["code"] == "CAPACITY_REACHED"
            assert "2/2 sessions (the server's --max-sessions-per-client)" in refused["data"]["message"]
            http = client.post("/reset", json={"seed": 1})
            assert http.status_code == 429 and "--max-sessions-per-client" in http.json()["detail"]
            first.send_text(json.dumps({"type": "reset", "data": {"seed": 1}}))
            second.send_text(json.dumps({"type": "state"}))
            assert json.loads(first.receive_text())["type"] == "observation"
            assert json.loads(second.receive_text())["type"] == "state"
        assert client.post("/reset", json={"seed": 1}).status_code == 200  # slots come back


def test_deeply_nested_json_is_refused_with_4xx_or_an_error_frame() -> None:
    with app_client() as client:
        for path in ("/reset", "/mcp"):
            for headers in ({"content-type": "application/json"}, {}):
                answer = client.post(path, content=DEEP, headers=headers)
                assert 400 <= answer.status_code < 500, (path, headers, answer.status_code)
        assert "nested deeper than 32" in client.post("/mcp", content=DEEP).json()["detail"]
        with client.websocket_connect("/ws") as ws:
            ws.send_text(DEEP)
            error = json.loads(ws.receive_text())
            assert error["data"]["code"] == "INVALID_JSON" and "nested deeper than 32" in error["data"]["message"]
            ws.send_text(json.dumps({"type": "reset", "data": {"seed": 1}}))
            assert json.loads(ws.receive_text())["type"] == "observation"  # the session goes on


def test_seeds_the_store_cannot_hold_are_refused() -> None:
    with app_client() as client:
        http = client.post("/reset", json={"seed": 2**63})
        assert http.status_code == 422 and "seed" in http.json()["detail"] and "9223372036854775807" in http.json()["detail"]
        error, = ws_exchange(client, {"type": "reset", "data": {"seed": 2**63}})
        assert error["data"]["code"] == "VALIDATION_ERROR" and "9223372036854775807" in error["data"]["message"]
        assert client.post("/reset", json={"seed": 2**63 - 1}).json()["observation"]["seed"] == 2**63 - 1


def test_every_limit_is_a_flag_in_help() -> None:
    import typer

    from serve_env.cli import register

    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # two commands, so `serve-env` is a subcommand
    result = CliRunner().invoke(app, ["serve-env", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for flag in ("--allowed-host", "--allow-origin", "--max-sessions-per-client", "--max-reply-kb", "--game-call-timeout", "--max-view-kb"):
        assert flag in result.output


def test_a_malformed_allow_origin_is_bad_input() -> None:
    from llm_arena_cli.app import app

    result = CliRunner().invoke(app, ["serve-env", "--allow-origin", "evil.example/path"])
    assert result.exit_code == 2 and "--allow-origin 'evil.example/path'" in result.output
