"""`arena web` hardening (issue 56, findings 2 and 6): a Host that is none of the server's names is
refused everywhere (DNS rebinding), a foreign Origin on every write; one client cannot hold every
play slot and a game only looked at is still closed when idle; deeply nested JSON is a 400, never
a 500; the matches pager keeps its filters; every limit is a flag with its default in --help."""

from __future__ import annotations

import html
import re
import time
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from tests.web.conftest import NAME_PAYLOAD
from web.app import create_app
from web.play import PlayConfig

LOCAL = "http://127.0.0.1:8000"  # what a browser on the operator's machine sends as Host
TOKEN_ENV = "ARENA_TEST_SECURITY_TOKEN"
DEEP = b"[" * 5000 + b"]" * 5000  # the review's probe: a 500 on /api/play before


def game_body(name: str = "alice", **extra: object) -> dict[str, object]:
    return {"game": "tictactoe", "opponent": "random", "name": name, **extra}


@pytest.fixture(scope="module")
def local_app(league_db):
    """The app as `arena web` builds it on the default bind address, writes enabled."""
    import os

    os.environ[TOKEN_ENV] = "t0ken"
    try:
        return create_app(league_db, write_token_env=TOKEN_ENV, bind_host="127.0.0.1", cors_origins=["https://lab.example"])
    finally:
        del os.environ[TOKEN_ENV]


@pytest.fixture(scope="module")
def local(local_app):
    with TestClient(local_app, base_url=LOCAL) as c:
        yield c


# ---- Host and Origin ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/", "/matches", "/api/leaderboard", "/api/openapi.json", "/static/app.css"])
def test_a_rebound_host_is_refused_on_every_path(local, path):
    assert local.get(path).status_code == 200
    refused = local.get(path, headers={"Host": "evil.example:8000"})
    assert refused.status_code == 403
    assert refused.json() == {"detail": "Host 'evil.example:8000' is not a name of this server (`arena web --allowed-host NAME` adds a name)"}
    assert "script-src 'self'" in refused.headers["content-security-policy"]  # refusals carry the headers too


def test_loopback_names_and_added_names_pass(league_db):
    assert TestClient(create_app(league_db, bind_host="127.0.0.1"), base_url="http://localhost:8000").get("/api/leagues").status_code == 200
    app = create_app(league_db, bind_host="127.0.0.1", allowed_hosts=["arena.example"])
    with TestClient(app, base_url="https://arena.example") as c:
        assert c.get("/api/leagues").status_code == 200
        assert c.get("/api/leagues", headers={"Host": "other.example"}).status_code == 403


def test_the_write_endpoint_checks_origin_before_the_token(local):
    auth = {"Authorization": "Bearer t0ken"}
    refused = local.post("/api/leagues/nope/rerate", headers={**auth, "Origin": "https://evil.example"})
    assert refused.status_code == 403 and refused.json()["detail"].startswith("cross-origin request from 'https://evil.example' refused")
    assert "--cors-origin" in refused.json()["detail"]
    assert local.post("/api/leagues/nope/rerate", headers={**auth, "Origin": "null"}).status_code == 403
    # past the guard (404: no such league, so nothing is rewritten): no Origin (curl), the page's own, a trusted one
    for origin in (None, LOCAL, "https://lab.example"):
        headers = {**auth, **({"Origin": origin} if origin else {})}
        assert local.post("/api/leagues/nope/rerate", headers=headers).status_code == 404, origin
    # reading stays open to any origin: CORS decides what a foreign page may read
    assert local.get("/api/leaderboard", headers={"Origin": "https://evil.example"}).status_code == 200


def test_any_interface_admits_any_host_but_still_checks_origin(league_db):
    with TestClient(create_app(league_db, bind_host="0.0.0.0", play=PlayConfig()), base_url="http://10.1.2.3:8000") as c:
        assert c.get("/api/leagues").status_code == 200
        assert c.post("/api/play", json=game_body(), headers={"Origin": "http://evil.example"}).status_code == 403
        assert c.post("/api/play", json=game_body(), headers={"Origin": "http://10.1.2.3:8000"}).status_code == 201


def test_a_rebound_page_cannot_play(play_db):
    """The review's probe: evil.example re-pointed at 127.0.0.1 sends Host and Origin evil.example,
    which the old same-origin test (Origin's host == Host) let through."""
    with TestClient(create_app(play_db, bind_host="127.0.0.1", play=PlayConfig()), base_url=LOCAL) as c:
        rebound = {"Host": "evil.example", "Origin": "http://evil.example"}
        assert c.post("/api/play", json=game_body(), headers=rebound).status_code == 403
        assert c.post("/api/play", json=game_body(), headers={"Origin": LOCAL}).status_code == 201


# ---- nested JSON ---------------------------------------------------------------------------------
def test_deeply_nested_json_is_a_400_everywhere(play_db, local):
    with TestClient(create_app(play_db, play=PlayConfig()), raise_server_exceptions=False) as c:
        game = c.post("/api/play", json=game_body()).json()
        for path in ("/api/play", f"/api/play/{game['id']}/move", "/api/play/abcdefghij/move"):
            r = c.post(path, content=DEEP, headers={"Content-Type": "application/json"})
            assert r.status_code == 400 and r.json() == {"detail": "JSON nested deeper than 32 levels refused"}, path
        # brackets inside a string do not nest: the move reaches the game, which judges it
        r = c.post(f"/api/play/{game['id']}/move", json={"move": "[" * 100})
        assert r.status_code == 200 and r.json()["feedback"]
    r = local.post("/api/leagues/main/rerate", content=DEEP, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "32 levels" in r.json()["detail"]


# ---- fair play slots and idle games ----------------------------------------------------------------
def per_client(app):
    """The app, with each request's client address taken from an X-Test-Client header (what
    uvicorn reads from the socket, or from X-Forwarded-For behind a trusted proxy)."""

    async def wrapped(scope, receive, send):
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"x-test-client")
            if given:
                scope = {**scope, "client": (given.decode(), 50000)}
        await app(scope, receive, send)

    return wrapped


def test_one_client_cannot_take_every_slot(play_db):
    config = PlayConfig(max_sessions=5, max_per_client=2)
    with TestClient(per_client(create_app(play_db, play=config))) as c:
        a, b, d = ({"X-Test-Client": ip} for ip in ("10.0.0.1", "10.0.0.2", "10.0.0.3"))
        first = [c.post("/api/play", json=game_body(), headers=a) for _ in range(2)]
        assert [r.status_code for r in first] == [201, 201]
        refused = c.post("/api/play", json=game_body(), headers=a)
        assert refused.status_code == 429
        assert refused.json()["detail"].startswith("this client already holds 2/2 sessions")
        assert "--play-max-per-client" in refused.json()["detail"]
        # another client still gets its share while the first is refused
        assert [c.post("/api/play", json=game_body("bob"), headers=b).status_code for _ in range(2)] == [201, 201]
        assert c.post("/api/play", json=game_body("dan"), headers=d).status_code == 201
        full = c.post("/api/play", json=game_body("dan"), headers=d)
        assert full.status_code == 503 and full.json()["detail"].startswith("server at capacity: 5/5 sessions")
        assert "--play-sessions" in full.json()["detail"]
        # closing a game gives its client's slot back
        assert c.delete(f"/api/play/{first[0].json()['id']}", headers=a).status_code == 204
        assert c.post("/api/play", json=game_body(), headers=a).status_code == 201


def test_a_client_at_its_share_gives_up_its_own_finished_game(play_db):
    from tests.web.test_play import play_out

    with TestClient(create_app(play_db, play=PlayConfig(max_sessions=10, max_per_client=1))) as c:
        done = play_out(c, c.post("/api/play", json=game_body()).json())
        assert done["done"] and c.get(f"/api/play/{done['id']}").status_code == 200  # its result still shows
        assert c.post("/api/play", json=game_body()).status_code == 201
        assert c.get(f"/api/play/{done['id']}").status_code == 404


def test_a_game_only_looked_at_is_closed_when_idle_and_a_move_keeps_one_open(play_db):
    """Idle 0.5 s, the sweeper looks every second: a page polling its game's view does not keep it,
    a player who moves does."""
    with TestClient(create_app(play_db, play=PlayConfig(idle_timeout_s=0.5))) as c:
        watched = c.post("/api/play", json=game_body()).json()
        played = c.post("/api/play", json={"game": "negotiation", "opponent": "bot", "name": "bob"}).json()
        started, last_move, polled = time.monotonic(), time.monotonic(), 0
        while time.monotonic() - started < 4.0:
            if c.get(f"/api/play/{watched['id']}").status_code == 404:
                break
            polled += 1
            if time.monotonic() - last_move > 0.2:
                assert c.post(f"/api/play/{played['id']}/move", json={"move": "hello"}).status_code == 200
                last_move = time.monotonic()
            time.sleep(0.05)
        waited = time.monotonic() - started
        assert 0.5 <= waited < 4.0 and polled >= 5, (waited, polled)
        assert c.get(f"/api/play/{played['id']}").status_code == 200


# ---- the matches pager -------------------------------------------------------------------------------
def pager_links(text: str) -> dict[str, dict[str, list[str]]]:
    links = dict(re.findall(r'<a rel="(prev|next)" href="([^"]*)"', text))
    return {rel: parse_qs(urlsplit(html.unescape(href)).query) for rel, href in links.items()}


def test_matches_pager_keeps_every_filter_and_escapes_it(client):
    query = {"league": "main", "policy": NAME_PAYLOAD, "game": "tictactoe", "status": "finished",
             "since": "2000-01-01", "until": "2999-12-31", "per_page": "1", "page": "2"}
    r = client.get("/matches", params=query)
    assert r.status_code == 200 and "page 2 of" in r.text
    links = pager_links(r.text)
    assert set(links) == {"prev", "next"}
    for rel, page in (("prev", "1"), ("next", "3")):
        assert links[rel] == {**{k: [v] for k, v in query.items()}, "page": [page]}, rel
    hrefs = re.findall(r'rel="(?:prev|next)" href="([^"]*)"', r.text)
    assert all("<" not in h and '"' not in h and " " not in h for h in hrefs)
    # following the link shows the same filtered list, one page on
    assert "page 3 of" in client.get("/matches" + html.unescape(hrefs[1])).text


def test_matches_pager_on_the_default_query_has_no_stray_filters(client):
    links = pager_links(client.get("/matches?league=main&per_page=5").text)
    assert links == {"next": {"league": ["main"], "per_page": ["5"], "page": ["2"]}}


# ---- the flags ------------------------------------------------------------------------------------------
def test_every_limit_is_a_flag_with_its_default_in_help():
    from typer.testing import CliRunner

    from llm_arena_cli.app import app

    text = re.sub(r"[\s│]+", " ", CliRunner().invoke(app, ["web", "--help"], env={"COLUMNS": "200"}).output)
    for flag, default in (("--play-sessions", "32"), ("--play-max-per-client", "4"), ("--play-idle", "600.0")):
        assert re.search(re.escape(flag) + r" .*?\[default: " + re.escape(default) + r"\]", text), flag
    assert "--allowed-host" in text and "--cors-origin" in text
    for bad in (["--play-max-per-client", "0"], ["--play-idle", "0"]):
        result = CliRunner().invoke(app, ["web", "--play", *bad])
        assert result.exit_code == 2, bad


def test_binding_every_interface_without_names_says_the_host_check_is_off(tmp_path, monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    from llm_arena_cli.app import app

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)
    url = f"sqlite:///{tmp_path / 'games.db'}"
    said = CliRunner().invoke(app, ["web", "--play", "--db", url, "--host", "0.0.0.0"]).output
    assert "any Host name is admitted" in said
    named = CliRunner().invoke(app, ["web", "--play", "--db", url, "--host", "0.0.0.0", "--allowed-host", "arena.example"])
    assert named.exit_code == 0 and "any Host name" not in named.output
