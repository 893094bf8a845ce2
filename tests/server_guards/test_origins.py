"""Host and Origin checks (server_guards.origins): DNS rebinding and cross-site pages are refused,
tools that send no Origin pass, the operator's names and origins are admitted."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient
from starlette.websockets import WebSocket, WebSocketDisconnect

from server_guards.origins import HostAndOriginGuard, OriginPolicy, server_names

WS_URL = "ws://127.0.0.1:8010/ws"  # a full URL: the test client's handshake says Host: testserver otherwise


async def _ok(_request) -> PlainTextResponse:
    return PlainTextResponse("ok")


async def _echo(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("hello")
    await websocket.close()


def _client(policy: OriginPolicy, host: str = "127.0.0.1:8010") -> TestClient:
    app = Starlette(routes=[Route("/", _ok, methods=["GET", "POST"]), WebSocketRoute("/ws", _echo)])
    app.add_middleware(HostAndOriginGuard, policy=policy)
    return TestClient(app, base_url=f"http://{host}")


def test_loopback_bind_names_its_loopback_names():
    assert server_names("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert server_names("localhost", ["arena.example"]) == {"127.0.0.1", "localhost", "::1", "arena.example"}
    assert server_names("10.1.2.3") == {"10.1.2.3"}
    assert server_names("0.0.0.0") is None  # every interface: the server cannot know its names
    assert server_names("0.0.0.0", ["Arena.Example:443"]) == {"arena.example"}


def test_a_rebound_name_is_refused_everywhere():
    client = _client(OriginPolicy.for_bind("127.0.0.1"), host="evil.example:8010")
    response = client.get("/")
    assert response.status_code == 403
    assert "evil.example" in response.json()["detail"] and "--allowed-host" in response.json()["detail"]
    with pytest.raises(WebSocketDisconnect):
        with client.websocket_connect("ws://evil.example:8010/ws"):
            pass


@pytest.mark.parametrize("host", ["127.0.0.1:8010", "localhost:8010", "[::1]:8010", "LOCALHOST"])
def test_the_servers_own_names_pass(host):
    assert _client(OriginPolicy.for_bind("127.0.0.1"), host=host).get("/").text == "ok"


def test_cross_site_writes_and_sockets_are_refused_reads_are_not():
    client = _client(OriginPolicy.for_bind("127.0.0.1"))
    foreign = {"origin": "http://evil.example"}
    assert client.get("/", headers=foreign).status_code == 200  # a read changes nothing (CORS decides what a page may read)
    refused = client.post("/", headers=foreign)
    assert refused.status_code == 403 and "cross-origin" in refused.json()["detail"]
    assert client.post("/", headers={"origin": "null"}).status_code == 403
    with pytest.raises(WebSocketDisconnect) as closed:
        with client.websocket_connect(WS_URL, headers=foreign):
            pass
    assert closed.value.code == 1008


def test_same_origin_no_origin_and_allowed_origins_pass():
    client = _client(OriginPolicy.for_bind("127.0.0.1", origins=["https://notebook.example:8888"]))
    assert client.post("/").status_code == 200  # curl, SDKs, OpenEnv's client: no Origin
    assert client.post("/", headers={"origin": "http://127.0.0.1:8010"}).status_code == 200
    assert client.post("/", headers={"origin": "https://NOTEBOOK.example:8888"}).status_code == 200
    assert client.post("/", headers={"origin": "http://127.0.0.1:9999"}).status_code == 403  # another port is another origin
    with client.websocket_connect(WS_URL, headers={"origin": "http://127.0.0.1:8010"}) as ws:
        assert ws.receive_text() == "hello"
