"""Every page and API route over a store filled by real league runs: status codes, filters,
downloads, clean 404s, the write-token rule, CORS, and agreement with league.ratings."""

from __future__ import annotations

import csv
import io
import re
from datetime import date, timedelta
from urllib.parse import quote

import pytest

from league.ratings import leaderboard
from league.store import Store
from tests.web.conftest import NAME_PAYLOAD
from web.app import create_app
from web.routes.leaderboard import _csv_cell
from web.routes.matches import MAX_REPLY_CHARS


def _match_ids(client, **params):
    return [m["id"] for m in client.get("/api/matches", params={"per_page": 200, **params}).json()["matches"]]


@pytest.mark.parametrize("path", [
    "/", "/?system=elo", "/?system=bt", "/?game=nim", "/?game=tictactoe&system=bt", "/?league=side",
    "/?system=bt&ci=sandwich&pooling=matches", "/?game=nim&system=bt&ci=sandwich",
    "/policies/bot", "/policies/bot?system=bt", "/h2h", "/h2h?game=nim", "/h2h?league=side",
    "/matches", "/matches?game=nim", "/matches?policy=bot&result=win", "/matches?status=finished&page=2&per_page=5",
    "/matches/1", "/matches/1?turn=3", "/live", "/live?league=side",
    "/api/leagues", "/api/leaderboard", "/api/leaderboard.csv", "/api/h2h", "/api/matches", "/api/matches/1",
    "/api/policies/bot", "/api/live", "/api/openapi.json", "/healthz", "/static/app.css",
])
def test_every_page_answers(client, path):
    response = client.get(path)
    assert response.status_code == 200, response.text[:300]
    if "text/html" in response.headers["content-type"]:
        assert "</html>" in response.text
        assert "Traceback" not in response.text


def test_newest_league_is_the_default_and_leagues_are_separate(client):
    assert client.get("/api/leaderboard").json()["league"] == "main"
    main = {r["policy"] for r in client.get("/api/leaderboard?league=main").json()["rows"]}
    side = {r["policy"] for r in client.get("/api/leaderboard?league=side").json()["rows"]}
    assert main == {"bot", "random", NAME_PAYLOAD} and side == {"bot", "random-b"}


@pytest.mark.parametrize("game", ["", "nim", "tictactoe"])
@pytest.mark.parametrize("system", ["trueskill", "elo", "bt"])
def test_leaderboard_agrees_with_the_ratings_of_the_log(client, league_db, game, system):
    store = Store(league_db)
    league_id = store.league_id("main")
    expected = leaderboard(store.results(league_id, game or None), by=system)
    store.close()
    body = client.get("/api/leaderboard", params={"league": "main", "game": game, "system": system}).json()
    assert body["from_snapshots"] is True
    rows = body["rows"]
    assert [r["policy"] for r in rows] == [r.policy for r in expected]
    for got, want in zip(rows, expected):
        assert (got["games"], got["wins"], got["draws"], got["losses"], got["rank"]) == (want.games, want.wins, want.draws, want.losses, want.rank)
        if system != "bt":  # BT intervals come from a seeded bootstrap; the point estimate must match
            assert got["lo"] == pytest.approx(want.lo) and got["hi"] == pytest.approx(want.hi)
        assert got["rating"] == pytest.approx(want.rating)
        assert got["last_played"] is not None and got["avg_latency_ms"] is not None


@pytest.mark.parametrize("ci", ["bootstrap", "sandwich"])
@pytest.mark.parametrize("pooling", ["games", "matches"])
def test_bradley_terry_interval_and_pooling_choices(client, league_db, ci, pooling):
    store = Store(league_db)
    expected = leaderboard(store.results(store.league_id("main")), by="bt", ci=ci, pooling=pooling)
    store.close()
    body = client.get("/api/leaderboard", params={"league": "main", "system": "bt", "ci": ci, "pooling": pooling}).json()
    assert (body["ci"], body["pooling"]) == (ci, pooling)
    assert [r["policy"] for r in body["rows"]] == [r.policy for r in expected]
    for got, want in zip(body["rows"], expected):
        assert got["rating"] == pytest.approx(want.rating) and got["rank"] == want.rank
        if ci == "sandwich":  # no resampling: the interval is exact
            assert (got["lo"], got["hi"]) == (pytest.approx(want.lo), pytest.approx(want.hi))
    html = client.get("/", params={"league": "main", "system": "bt", "ci": ci, "pooling": pooling}).text
    assert f'<option value="{ci}" selected>' in html and f'<option value="{pooling}" selected>' in html
    if (ci, pooling) != ("bootstrap", "games"):
        assert f"&amp;ci={ci}&amp;pooling={pooling}" in html  # the downloads keep the choice
    assert client.get("/api/leaderboard", params={"system": "bt", "ci": "laplace"}).status_code == 422
    other = client.get("/api/leaderboard", params={"league": "main", "system": "elo", "ci": ci, "pooling": pooling}).json()
    assert (other["ci"], other["pooling"]) == ("bootstrap", "games")  # the choices are Bradley-Terry's


def test_leaderboard_page_shows_ci_and_game_filter(client):
    html = client.get("/?league=main&game=nim&system=trueskill").text
    assert "Leaderboard · nim" in html
    assert len(re.findall(r'class="ci-text">\[-?\d+\.\d, -?\d+\.\d\]', html)) == 3
    assert '<option value="nim" selected>' in html


def test_invalid_moves_and_tokens_are_counted(client):
    rows = {r["policy"]: r for r in client.get("/api/leaderboard?league=main").json()["rows"]}
    payload = rows[NAME_PAYLOAD]
    assert payload["invalid_rate"] > 0 and payload["avg_tokens"] is not None
    assert rows["bot"]["invalid_rate"] == 0 and rows["bot"]["avg_tokens"] is None
    stats = client.get(f"/api/policies/{quote(NAME_PAYLOAD, safe='')}?league=main").json()["stats"]
    assert stats["invalid"] >= 1 and stats["moves"] > stats["invalid"]


def test_csv_download(client):
    response = client.get("/api/leaderboard.csv?league=main&game=tictactoe&system=elo")
    assert response.headers["content-type"].startswith("text/csv")
    assert "attachment" in response.headers["content-disposition"]
    table = list(csv.DictReader(io.StringIO(response.text)))
    assert {r["policy"] for r in table} == {"bot", "random", NAME_PAYLOAD}
    json_rows = client.get("/api/leaderboard?league=main&game=tictactoe&system=elo").json()["rows"]
    assert [r["policy"] for r in table] == [r["policy"] for r in json_rows]
    assert [int(r["wins"]) for r in table] == [r["wins"] for r in json_rows]


def test_csv_cells_that_spreadsheets_would_run_are_quoted():
    assert _csv_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)" and _csv_cell("@x") == "'@x" and _csv_cell("bot") == "bot" and _csv_cell(3) == 3


def test_match_filters(client):
    all_main = _match_ids(client, league="main")
    assert len(all_main) == 12
    nim = client.get("/api/matches", params={"league": "main", "game": "nim", "per_page": 200}).json()
    assert nim["total"] == 6 and all(m["game_id"] == "nim" for m in nim["matches"])
    rows = {r["policy"]: r for r in client.get("/api/leaderboard?league=main").json()["rows"]}
    for result, key in (("win", "wins"), ("draw", "draws"), ("loss", "losses")):
        found = client.get("/api/matches", params={"league": "main", "policy": "bot", "result": result, "per_page": 200}).json()
        assert found["total"] == rows["bot"][key]
        for m in found["matches"]:
            assert "bot" in m["seats"]
            if result == "win":
                assert m["winners"] == ["bot"]
    seated = client.get("/api/matches", params={"league": "main", "policy": "random", "per_page": 200}).json()["matches"]
    assert seated and all("random" in m["seats"] for m in seated) and len(seated) == 8


def test_match_date_filter_and_pagination(client):
    today = date.today()
    assert client.get("/api/matches", params={"league": "main", "since": str(today + timedelta(days=2))}).json()["total"] == 0
    assert client.get("/api/matches", params={"league": "main", "until": str(today - timedelta(days=2))}).json()["total"] == 0
    assert client.get("/api/matches", params={"league": "main", "since": str(today - timedelta(days=1)), "until": str(today + timedelta(days=1))}).json()["total"] == 12
    pages = [_ids for _ids in (
        [m["id"] for m in client.get("/api/matches", params={"league": "main", "per_page": 5, "page": p}).json()["matches"]] for p in (1, 2, 3, 4)
    )]
    assert [len(p) for p in pages] == [5, 5, 2, 0]
    flat = [i for p in pages for i in p]
    assert len(set(flat)) == 12
    html = client.get("/matches?league=main&per_page=5&page=2").text
    assert "page 2 of 3" in html and 'rel="prev"' in html and 'rel="next"' in html


def test_result_filter_needs_a_policy(client):
    assert client.get("/api/matches?result=win").status_code == 400
    page = client.get("/matches?result=win")
    assert page.status_code == 400 and "needs a policy" in page.text


def test_replay_page_shows_the_requested_turn_and_caps_replies(client):
    match_id = next(i for i in _match_ids(client, league="main", policy=NAME_PAYLOAD))
    detail = client.get(f"/api/matches/{match_id}").json()
    turns = detail["turns"]
    html = client.get(f"/matches/{match_id}?turn=2").text
    assert re.search(r'id="turn-2" data-step="2">', html)  # shown
    assert re.search(r'id="turn-1" data-step="1" hidden>', html)  # others hidden
    assert html.count('class="turn') == len(turns)
    long = [t for t in turns if len(t["raw"]) > MAX_REPLY_CHARS]
    assert long, "the payload policy writes replies longer than the cap"
    assert "more characters not shown" in html
    assert "z" * (MAX_REPLY_CHARS + 1) not in html


def test_policy_page(client):
    html = client.get("/policies/bot?league=main&system=elo").text
    assert 'id="rating-chart"' in html and 'id="chart-data"' in html
    api = client.get("/api/policies/bot?league=main&system=elo").json()
    assert len(api["history"]) >= 2 and api["rating"] is not None
    assert {o["column"] for o in api["opponents"]} == {"random", NAME_PAYLOAD}
    assert {g["game"] for g in api["per_game"]} == {"nim", "tictactoe"}
    assert sum(o["games"] for o in api["opponents"]) == api["stats"]["games"]


def test_head_to_head_is_consistent(client):
    body = client.get("/api/h2h?league=main&game=tictactoe").json()
    pairs = {(p["row"], p["column"]): p for p in body["pairs"]}
    for (a, b), p in pairs.items():
        q = pairs[(b, a)]
        assert (p["wins"], p["draws"], p["losses"]) == (q["losses"], q["draws"], q["wins"])
        assert p["games"] == 2
    html = client.get("/h2h?league=main&game=tictactoe").text
    assert html.count('class="cell"') == 6


@pytest.mark.parametrize("path, message", [
    ("/matches/99999", "no match with id 99999"),
    ("/policies/nobody?league=main", "policy &#39;nobody&#39; played no match"),
    ("/?league=nope", "no league named &#39;nope&#39;"),
    ("/?league=main&game=chess", "no matches of game &#39;chess&#39;"),
    ("/no/such/page", "Not Found"),
])
def test_404s_are_clean_pages(client, path, message):
    response = client.get(path)
    assert response.status_code == 404
    assert message in response.text and "Traceback" not in response.text and "</html>" in response.text


def test_api_errors_are_json(client):
    for path in ("/api/matches/99999", "/api/policies/nobody", "/api/leaderboard?league=nope", "/api/h2h?game=zzz"):
        response = client.get(path)
        assert response.status_code == 404 and set(response.json()) == {"detail"}
    bad = client.get("/api/leaderboard?system=glicko")
    assert bad.status_code == 422 and "system" in bad.json()["detail"]
    assert client.get("/?system=glicko").status_code == 400
    assert client.get("/matches/abc").status_code == 400


def test_security_headers_and_cors_off_by_default(client):
    response = client.get("/", headers={"Origin": "https://evil.example"})
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert "access-control-allow-origin" not in response.headers


def test_cors_when_configured(league_db):
    from fastapi.testclient import TestClient

    with TestClient(create_app(league_db, cors_origins=["https://lab.example"])) as c:
        ok = c.get("/api/leaderboard", headers={"Origin": "https://lab.example"})
        other = c.get("/api/leaderboard", headers={"Origin": "https://evil.example"})
    assert ok.headers["access-control-allow-origin"] == "https://lab.example"
    assert "access-control-allow-origin" not in other.headers


def test_writes_need_the_token(league_db, monkeypatch, client):
    from fastapi.testclient import TestClient

    assert client.post("/api/leagues/main/rerate").status_code == 403  # no token configured: writes off
    monkeypatch.setenv("ARENA_TEST_WEB_TOKEN", "s3cret-token")
    with TestClient(create_app(league_db, write_token_env="ARENA_TEST_WEB_TOKEN")) as c:
        assert c.post("/api/leagues/main/rerate").status_code == 401
        assert c.post("/api/leagues/main/rerate", headers={"Authorization": "Bearer wrong"}).status_code == 403
        ok = c.post("/api/leagues/main/rerate", headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 200 and ok.json()["snapshot_rows"] > 0
        assert "s3cret-token" not in ok.text
        assert c.post("/api/leagues/nope/rerate", headers={"Authorization": "Bearer s3cret-token"}).status_code == 404
    assert client.get("/api/leaderboard?league=main").json()["from_snapshots"] is True


@pytest.mark.parametrize("path, status", [
    ("/api/matches?until=9999-12-31", 200), ("/api/matches?since=0001-01-01", 200), ("/api/matches?page=1000000&per_page=200", 200),
    ("/api/matches/99999999999999999999", 422), ("/matches/99999999999999999999", 400), ("/api/matches/0", 422),
    ("/api/policies/%00", 404), ("/api/leaderboard?league=%00", 404), ("/api/matches?policy=%27%22%3B--", 200),
    ("/matches?since=not-a-date", 400), ("/matches?since=&until=&result=&status=", 200),
])
def test_edge_inputs_never_500(client, path, status):
    assert client.get(path).status_code == status


@pytest.mark.postgres
def test_postgres_store_gives_the_same_answers(tmp_path):
    """The dialect-specific SQL (json_array_elements_text, MATERIALIZED CTE) on a real PostgreSQL
    league, checked against league.ratings of the same log."""
    from fastapi.testclient import TestClient

    from league.config import GameEntry, LeagueConfig, PolicyEntry
    from tests.league.conftest import reset_postgres
    from tests.web.conftest import _play

    from tests.services import postgres_url

    url = postgres_url()
    reset_postgres(url)
    try:
        _play(url, LeagueConfig(
            name="pg", seed=5, matches_per_pair=2, concurrency=2, games=[GameEntry(id="tictactoe"), GameEntry(id="nim")],
            policies=[PolicyEntry(name="bot", spec="bot"), PolicyEntry(name="random", spec="random"), PolicyEntry(name=NAME_PAYLOAD, spec="test-xss")],
        ))
        store = Store(url)
        expected = leaderboard(store.results(store.league_id("pg")), by="elo")
        store.close()
        with TestClient(create_app(url)) as c:
            rows = c.get("/api/leaderboard?system=elo").json()["rows"]
            assert [(r["policy"], r["wins"], r["draws"], r["losses"]) for r in rows] == [(e.policy, e.wins, e.draws, e.losses) for e in expected]
            assert rows[[r["policy"] for r in rows].index(NAME_PAYLOAD)]["invalid_rate"] > 0
            assert c.get("/api/matches", params={"policy": "bot", "result": "win"}).json()["total"] == next(e.wins for e in expected if e.policy == "bot")
            assert sum(p["games"] for p in c.get("/api/h2h?game=nim").json()["pairs"]) == 2 * 6
            for path in ("/", "/h2h", "/matches?policy=bot", "/policies/bot", "/live", "/matches/1"):
                assert c.get(path).status_code == 200, path
    finally:
        reset_postgres(url)
