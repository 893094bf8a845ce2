"""Browser play (`arena web --play`) through its JSON API: full games against `bot` and a league
policy reach a result that is stored and rated under the visitor's name, rejected moves answer the
game's feedback, bad requests are clear 4xx errors, and the page is off unless asked for."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from league.store import Store
from tests.web.conftest import PLAY_PAYLOAD
from web.app import create_app
from web.play import PlayConfig


@pytest.fixture(scope="module")
def play(play_db):
    with TestClient(create_app(play_db, play=PlayConfig())) as c:
        yield c


def start(client, **body):
    return client.post("/api/play", json={"game": "tictactoe", "opponent": "bot", "name": "alice", **body})


def play_out(client, view, pick=lambda moves: moves[0]):
    """Play `pick(legal moves)` until the end; returns the final view."""
    for _ in range(100):
        if view["done"]:
            return view
        r = client.post(f"/api/play/{view['id']}/move", json={"move": pick(view["legal_moves"])})
        assert r.status_code == 200, r.text
        view = r.json()
    raise AssertionError("the game did not end in 100 moves")


def test_off_by_default(client):
    assert client.get("/play").status_code == 404
    assert client.post("/api/play", json={"game": "tictactoe", "opponent": "bot", "name": "alice"}).status_code == 404
    assert client.get("/api/play/abcdefghijk").status_code == 404
    assert 'href="/play"' not in client.get("/").text
    assert "/api/play" not in client.get("/api/openapi.json").text


def test_full_tictactoe_game_against_bot_is_stored_and_rated(play, play_db):
    r = start(play, seed=5)
    assert r.status_code == 201, r.text
    view = r.json()
    assert view["players"] == ["alice", "bot"] and view["seat"] == 0 and view["player"] == 0
    assert view["legal_moves"] == [str(i) for i in range(9)] and "Tic-Tac-Toe" in view["rules"]
    assert view["text"].startswith("You are X.") and not view["done"]
    final = play_out(play, view)
    assert final["status"] == "finished" and final["result"] in {"win", "loss", "draw"}
    assert final["outcome"]["reason"] and final["legal_moves"] is None and final["player"] is None
    assert final["result"] == "loss"  # bot is minimax; "first legal cell" loses to it
    match_id = final["match_id"]
    assert isinstance(match_id, int)
    # the same match, read back through the leaderboard's own API
    stored = play.get(f"/api/matches/{match_id}").json()
    assert stored["seats"] == ["alice", "bot"] and stored["game_id"] == "tictactoe" and stored["seed"] == 5
    assert [t["action"] for t in stored["turns"] if t["player"] == 0 and t["valid"]][:1] == ["0"]
    board = play.get("/api/leaderboard?league=web-play&game=tictactoe").json()["rows"]
    assert {row["policy"]: row["losses"] for row in board}["alice"] >= 1
    with Store(play_db) as store:
        row = store.policy("alice")
        assert row.spec == "serve-env:alice" and row.meta == {"source": "web-play"}
    # the finished game still answers its view; a move after the end is a conflict
    assert play.get(f"/api/play/{final['id']}").json()["result"] == "loss"
    r = play.post(f"/api/play/{final['id']}/move", json={"move": "4"})
    assert r.status_code == 409 and "over" in r.json()["detail"]


def test_second_seat_sees_the_opponents_first_move(play):
    view = start(play, seat=1, seed=2).json()
    assert view["players"] == ["bot", "alice"] and view["turn"] == 1 and len(view["legal_moves"]) == 8
    assert play_out(play, view)["done"]


def test_rejected_move_answers_the_games_feedback_then_its_rule(play):
    view = start(play, seed=1).json()
    r = play.post(f"/api/play/{view['id']}/move", json={"move": "middle"})
    assert r.status_code == 200
    again = r.json()
    assert again["feedback"] == "Invalid move: 'middle' is not a cell number 0-8 (2 attempt(s) left)"
    assert again["attempt"] == 1 and again["turn"] == 0 and again["legal_moves"] == view["legal_moves"] and not again["done"]
    # a legal move clears the feedback
    ok = play.post(f"/api/play/{view['id']}/move", json={"move": "4"}).json()
    assert ok["feedback"] is None and ok["attempt"] == 0 and ok["turn"] == 2
    # three invalid attempts in one turn: the game's rule (forfeit) ends it, and it is stored
    for _ in range(3):
        last = play.post(f"/api/play/{view['id']}/move", json={"move": "4"}).json()  # taken
    assert last["done"] and last["result"] == "loss" and last["match_id"]


def test_free_text_game_has_no_buttons_and_rejects_garbage(play):
    view = start(play, game="negotiation", seed=3).json()
    assert view["legal_moves"] is None and "pool" in view["text"]
    again = play.post(f"/api/play/{view['id']}/move", json={"move": "[Accept]"}).json()  # there is no offer to accept
    assert again["feedback"] and again["attempt"] == 1 and not again["done"]
    talk = play.post(f"/api/play/{view['id']}/move", json={"move": "hello there"}).json()
    assert talk["feedback"] is None and "You: hello there" in talk["text"] and talk["turn"] == 2


def test_league_policy_by_name_and_textarena_game(play):
    view = start(play, game="textarena:TicTacToe-v0", opponent="champion", name="bob", seed=4).json()
    assert view["players"] == ["bob", "champion"] and view["legal_moves"][0] == "[0]"
    final = play_out(play, view)
    assert final["status"] == "finished" and final["match_id"]
    assert play.get(f"/api/matches/{final['match_id']}").json()["seats"] == ["bob", "champion"]


def test_one_player_game_is_not_stored(play):
    view = play.post("/api/play", json={"game": "textarena:TowerOfHanoi-v0", "players": 1, "name": "carol"}).json()
    assert view["solo"] and view["players"] == ["carol"] and view["opponent"] is None
    assert play.delete(f"/api/play/{view['id']}").status_code == 204
    assert play.get(f"/api/play/{view['id']}").status_code == 404


@pytest.mark.parametrize("body, status, says", [
    ({"game": "tictactoee"}, 400, "unknown game 'tictactoee'; did you mean tictactoe"),
    ({"opponent": "openai:gpt-4o-mini"}, 400, "policy kind 'openai' is not served here (allowed: bot, random; the operator adds kinds with"),
    ({"opponent": "gpt4"}, 400, "policy kind 'gpt4'"),
    ({"opponent": "llm-champ"}, 400, "league policy 'llm-champ' is a 'local' policy"),
    ({"opponent": "agent-x"}, 400, "'agent-x' is an outside player"),
    ({"opponent": "http://127.0.0.1:1/agent"}, 400, "policy kind 'http'"),
    ({"opponent": ""}, 422, "opponent: choose one"),
    ({"seat": 2}, 400, "seat 2 does not exist in a 2-player tictactoe"),
    ({"players": 3}, 400, "tictactoe"),
    ({"name": "a<b>"}, 422, "name 'a<b>': use 1-40 characters"),
    ({"name": ""}, 422, "name '': use"),
    ({"name": "x" * 41}, 422, "use 1-40 characters"),
    ({"name": "Bot"}, 422, "is a policy kind"),
    ({"name": "champion"}, 422, "belongs to a league policy"),
    ({"colour": "red"}, 422, "colour: Extra inputs are not permitted"),
    ({"seed": -1}, 422, "seed: Input should be greater than or equal to 0"),
])
def test_bad_starts_are_clear_errors(play, body, status, says):
    r = start(play, **body)
    assert r.status_code == status, r.text
    assert says in r.json()["detail"]


def test_refused_requests(play):
    view = start(play).json()
    sid = view["id"]
    r = play.post("/api/play", content=b"game=tictactoe", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415 and "Content-Type: application/json" in r.json()["detail"]
    r = play.post("/api/play", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["detail"].startswith("body: invalid JSON")
    r = play.post("/api/play", json={"game": "tictactoe", "opponent": "bot", "name": "alice"}, headers={"Origin": "https://evil.example"})
    assert r.status_code == 403 and "cross-origin" in r.json()["detail"]
    r = play.post(f"/api/play/{sid}/move", json={"move": "4"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403
    assert play.delete(f"/api/play/{sid}", headers={"Origin": "https://evil.example"}).status_code == 403
    r = play.post(f"/api/play/{sid}/move", json={"move": "4" * 20_000})
    assert r.status_code == 413 and "16384 bytes" in r.json()["detail"]
    r = play.post(f"/api/play/{sid}/move", json={"move": "4" * 1001})
    assert r.status_code == 422 and "1001 characters, over the limit of 1000" in r.json()["detail"]
    r = play.post(f"/api/play/{sid}/move", json={"moves": "4"})
    assert r.status_code == 422 and r.json()["detail"].startswith("move: Field required")
    r = play.post("/api/play/no-such-game-id/move", json={"move": "4"})
    assert r.status_code == 404 and "start a new game" in r.json()["detail"]
    assert play.get("/api/play/bad id!").status_code in (404, 422)
    # the session survived every refusal
    assert play.post(f"/api/play/{sid}/move", json={"move": "4"}).json()["turn"] == 2


def test_page_lists_games_and_only_allowed_opponents(play):
    r = play.get("/play")
    assert r.status_code == 200 and "script-src 'self'" in r.headers["content-security-policy"]
    html = r.text
    assert '<a href="/play">Play</a>' in html and '<script src="/static/play.js"></script>' in html
    assert '<option value="tictactoe"' in html and '<option value="textarena:TicTacToe-v0"' in html
    assert '<option value="champion">champion (bot)</option>' in html
    assert "llm-champ" not in html and "agent-x" not in html
    assert PLAY_PAYLOAD not in html and "&lt;script&gt;alert(9)&lt;/script&gt;" in html
    assert "another spec" not in html  # no typed specs unless the operator allows more kinds
    assert play.get("/static/play.js").status_code == 200


def test_session_limit_and_idle_sessions_closed(play_db):
    config = PlayConfig(max_sessions=2, idle_timeout_s=0.5)
    with TestClient(create_app(play_db, play=config)) as c:
        first, second = start(c).json(), start(c).json()
        r = start(c)
        assert r.status_code == 503 and "server at capacity: 2/2 sessions" in r.json()["detail"]
        # a finished game gives up its slot to a new one
        play_out(c, second)
        third = start(c)
        assert third.status_code == 201
        assert c.get(f"/api/play/{second['id']}").status_code == 404
        # idle games are closed by the sweeper, which looks every second here
        time.sleep(2.5)
        assert c.get(f"/api/play/{first['id']}").status_code == 404
        assert c.get(f"/api/play/{third.json()['id']}").status_code == 404
        assert start(c).status_code == 201


def test_play_config_refuses_unsafe_or_unknown_kinds():
    assert PlayConfig.build().allowed_kinds == {"bot", "random"} and not PlayConfig.build().typed_specs
    assert PlayConfig.build(["local"]).typed_specs
    with pytest.raises(ValueError, match="would read this server's terminal"):
        PlayConfig.build(["human"])
    with pytest.raises(ValueError, match="no such policy kind"):
        PlayConfig.build(["gpt"])


def test_cli_play_allow_needs_play():
    from typer.testing import CliRunner

    from llm_arena_cli.app import app

    result = CliRunner().invoke(app, ["web", "--play-allow", "local"])
    assert result.exit_code == 2 and "--play-allow needs --play" in result.output
