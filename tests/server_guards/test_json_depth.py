"""Deep JSON is refused before Python's recursive parser sees it (server_guards.json_depth)."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from server_guards.json_depth import MAX_JSON_DEPTH, BoundedJSONBodies, JSONTooDeep, loads_bounded, nesting_depth


@pytest.mark.parametrize("text, depth", [
    ("5", 0), ('"[[["', 0), ("{}", 1), ('{"a": [1, {"b": []}]}', 4), ('["]]]]", [["\\"["]]]', 3), ("[" * 5000, 5000),
])
def test_nesting_depth_ignores_brackets_in_strings(text, depth):
    assert nesting_depth(text) == depth
    assert nesting_depth(text.encode()) == depth


def test_loads_bounded_refuses_what_json_would_recurse_on():
    deep = "[" * 5000 + "]" * 5000
    with pytest.raises(RecursionError):
        json.loads(deep)  # the failure being guarded against
    with pytest.raises(JSONTooDeep, match=f"deeper than {MAX_JSON_DEPTH}"):
        loads_bounded(deep)
    nested_ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert loads_bounded(nested_ok) is not None


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse({"got": await request.json()})


def _client() -> TestClient:
    app = Starlette(routes=[Route("/", _echo, methods=["POST"])])
    app.add_middleware(BoundedJSONBodies, limit=8)
    return TestClient(app)


def test_the_middleware_answers_400_and_lets_the_rest_through():
    client = _client()
    refused = client.post("/", content="[" * 5000 + "]" * 5000, headers={"content-type": "application/json"})
    assert refused.status_code == 400 and "8 levels" in refused.json()["detail"]
    assert client.post("/", json={"a": [[1]]}).json() == {"got": {"a": [[1]]}}
    streamed = client.post("/", content=iter([b'{"a": ', b"[1, 2]}"]), headers={"content-type": "application/json"})
    assert streamed.json() == {"got": {"a": [1, 2]}}
