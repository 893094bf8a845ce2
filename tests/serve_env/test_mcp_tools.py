"""`arena serve-env`'s MCP tools (make_move, legal_moves, rules): played by openenv-core's own,
unmodified MCPToolClient over a real socket, and, for the three wire forms and their errors, in
process."""

from __future__ import annotations

import json
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

CLIENT_SCRIPT = Path(__file__).with_name("openenv_mcp_play.py")
TIC = {"game": "tictactoe", "seed": 3, "seat": 1, "opponents": ["bot"]}


@pytest.mark.slow  # the client venv's imports (gradio, fastmcp) take several seconds
def test_openenv_mcp_tool_client_plays_through_the_tools() -> None:
    resets = [TIC, {"game": "textarena:TicTacToe-v0", "seed": 2, "opponents": ["random"]}]
    with serve_in_thread(build_app(ServeConfig(allowed_hosts=TEST_HOSTS))) as url:
        done = subprocess.run([openenv_python(), str(CLIENT_SCRIPT), url, json.dumps(resets)],
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert all("failed" not in r for r in results), results
    for result, seat in zip(results, (1, 0)):
        assert result["tools"] == ["legal_moves", "make_move", "rules"] and "Tic" in result["rules"]
        rejected, *played = result["moves"]
        assert rejected["attempt"] == 1 and rejected["feedback"] and not rejected["done"]
        last = played[-1]
        assert last["done"] and last["reward"] == last["outcome"]["scores"][seat]
        assert all(m["reward"] == 0.0 and not m["done"] for m in played[:-1])
        assert result["legal_after_end"] is None
        after_end, unknown, bad_args = result["errors"]
        assert "episode is over" in after_end and "execution_error" in after_end
        assert "no tool 'resign'" in unknown and "tool_not_found" in unknown
        assert "one string argument" in bad_args and "invalid_args" in bad_args


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(build_app(ServeConfig(allowed_hosts=TEST_HOSTS))) as c:
        yield c


def exchange(client: TestClient, *messages: dict) -> list[dict]:
    with client.websocket_connect("/ws") as ws:
        replies = []
        for message in messages:
            ws.send_text(json.dumps(message))
            replies.append(json.loads(ws.receive_text()))
    return replies


def rpc(method: str, params: dict | None = None, request_id: int = 1) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params or {}, "id": request_id}


def test_a_tool_move_plays_the_same_episode_as_a_step(client: TestClient) -> None:
    _, stepped = exchange(client, {"type": "reset", "data": TIC}, {"type": "step", "data": {"move": "0"}})
    _, called = exchange(client, {"type": "reset", "data": TIC},
                         {"type": "step", "data": {"type": "call_tool", "tool_name": "make_move", "arguments": {"move": "0"}}})
    observation = called["data"]["observation"]
    assert observation["tool_name"] == "make_move" and observation["error"] is None
    data = observation["result"]["data"]
    assert {k: v for k, v in data.items() if k not in ("reward", "done")} == stepped["data"]["observation"]
    assert json.loads(observation["result"]["content"][0]["text"]) == data
    assert (called["data"]["reward"], called["data"]["done"]) == (stepped["data"]["reward"], stepped["data"]["done"])


def test_jsonrpc_over_the_ws_session(client: TestClient) -> None:
    early, _, listed, rules, legal, moved, unknown, bad, other = exchange(
        client,
        {"type": "mcp", "data": rpc("tools/call", {"name": "rules"})},
        {"type": "reset", "data": TIC},
        {"type": "mcp", "data": rpc("tools/list", request_id=2)},
        {"type": "mcp", "data": rpc("tools/call", {"name": "rules"}, 3)},
        {"type": "mcp", "data": rpc("tools/call", {"name": "legal_moves"}, 4)},
        {"type": "mcp", "data": rpc("tools/call", {"name": "make_move", "arguments": {"move": "4"}}, 5)},
        {"type": "mcp", "data": rpc("tools/call", {"name": "resign"}, 6)},
        {"type": "mcp", "data": rpc("tools/call", {"name": "legal_moves", "arguments": {"x": 1}}, 7)},
        {"type": "mcp", "data": rpc("resources/list", request_id=8)},
    )
    assert early["type"] == "mcp" and "send a reset first" in early["data"]["error"]["message"]
    assert [t["name"] for t in listed["data"]["result"]["tools"]] == ["make_move", "legal_moves", "rules"]
    assert listed["data"]["result"]["tools"][0]["inputSchema"]["required"] == ["move"] and listed["data"]["id"] == 2
    assert rules["data"]["result"]["data"].startswith("Tic-Tac-Toe")
    assert "4" in legal["data"]["result"]["data"] and "1" not in legal["data"]["result"]["data"]  # bot took cell 1
    assert moved["data"]["result"]["data"]["turn"] == 3 and moved["data"]["id"] == 5
    assert unknown["data"]["error"]["code"] == -32602 and unknown["data"]["error"]["data"]["error_type"] == "tool_not_found"
    assert "takes no arguments" in bad["data"]["error"]["message"]
    assert other["data"]["error"]["code"] == -32601


def test_stateless_http_mcp(client: TestClient) -> None:
    listed = client.post("/mcp", json=rpc("tools/list")).json()
    assert {t["name"] for t in listed["result"]["tools"]} == {"make_move", "legal_moves", "rules"}
    called = client.post("/mcp", json=rpc("tools/call", {"name": "rules"}, 2)).json()
    assert called["id"] == 2 and called["error"]["code"] == -32600 and "WS /ws" in called["error"]["message"]
    assert client.post("/mcp", json={}).json()["error"]["code"] == -32600  # what OpenEnv's validator sends
    assert client.post("/mcp", content=b"{oops", headers={"content-type": "application/json"}).json()["error"]["code"] == -32600
    assert client.post("/mcp", json={**rpc("tools/list"), "params": [1]}).json()["error"]["code"] == -32602


def test_tool_steps_list_tools_and_report_errors(client: TestClient) -> None:
    listed, _, extra, unknown = exchange(
        client,
        {"type": "step", "data": {"type": "list_tools"}},
        {"type": "reset", "data": TIC},
        {"type": "step", "data": {"type": "call_tool", "tool_name": "make_move", "arguments": {"move": "4"}, "x": 1}},
        {"type": "step", "data": {"type": "call_tool", "tool_name": "resign"}},
    )
    tools = listed["data"]["observation"]["tools"]
    assert [t["name"] for t in tools] == ["make_move", "legal_moves", "rules"] and "input_schema" in tools[0]
    assert extra["data"]["observation"]["error"]["error_type"] == "invalid_args"
    assert unknown["data"]["observation"]["error"] == {"error_type": "tool_not_found", "message": "no tool 'resign'; the tools are legal_moves, make_move, rules"}
