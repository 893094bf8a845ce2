"""Schemathesis fuzzes the JSON API from the app's own OpenAPI schema, in process (ASGI): no
request, valid or not, may get a 5xx. The read-only API over the shared league store, then the
play API (`arena web --play`: start, view, move, close), the latter also in a game that is really
in play. Seeded (derandomized) and bounded so the file stays well under a minute."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from web.app import create_app
from web.play import PlayConfig

pytestmark = pytest.mark.slow
EXAMPLES_PER_OPERATION = 40
PLAY_EXAMPLES_PER_OPERATION = 25
FUZZ_SETTINGS = dict(deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def schema(app):
    return schemathesis.openapi.from_asgi("/api/openapi.json", app)


@pytest.fixture(scope="module")
def play_app(play_db):
    # a small share per client, so the fuzzer's starts also meet the refusals (429, 503)
    return create_app(play_db, play=PlayConfig(max_sessions=6, max_per_client=3))


@pytest.fixture(scope="module")
def play_schema(play_app):
    return schemathesis.openapi.from_asgi("/api/openapi.json", play_app)


def fuzz_operation(operation, examples: int, session_id=None, answered: list[int] | None = None, body=None, after=None) -> None:
    """`examples` generated requests to `operation`, none answered with a 5xx; with `session_id`,
    the path's game id is replaced by that one, so bodies reach a game in play; with `body`, the
    generated body's fields are overlaid with those, so starts name a real game; `after` sees each
    response; `answered` collects the status codes."""

    @settings(max_examples=examples, **FUZZ_SETTINGS)
    @given(case=operation.as_strategy())
    def fuzz(case) -> None:
        if session_id is not None:
            case.path_parameters = {**(case.path_parameters or {}), "session_id": session_id()}
        if body is not None and isinstance(case.body, dict):
            case.body = {**case.body, **body}
        response = case.call()
        if after is not None:
            after(response)
        if answered is not None:
            answered.append(response.status_code)
        assert response.status_code < 500, f"{case.method} {case.formatted_path} {case.query} {case.body!r:.200}: {response.status_code} {response.text[:300]}"

    fuzz()


def test_schema_lists_the_api(schema):
    paths = set(schema.raw_schema["paths"])
    assert {"/api/leaderboard", "/api/leaderboard.csv", "/api/matches", "/api/matches/{match_id}", "/api/h2h", "/api/live",
            "/api/leagues", "/api/policies/{name}", "/api/leagues/{name}/rerate"} <= paths


def test_no_server_errors(schema):
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 9
    for operation in operations:
        fuzz_operation(operation, EXAMPLES_PER_OPERATION)


def test_play_schema_describes_the_bodies(play_schema):
    paths = play_schema.raw_schema["paths"]
    assert {("post", "/api/play"), ("get", "/api/play/{session_id}"), ("post", "/api/play/{session_id}/move"),
            ("delete", "/api/play/{session_id}")} <= {(m, p) for p, ops in paths.items() for m in ops}
    start = paths["/api/play"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert start["required"] == ["game", "name"] and start["additionalProperties"] is False
    assert paths["/api/play/{session_id}/move"]["post"]["requestBody"]["content"]["application/json"]["schema"]["required"] == ["move"]


def test_no_server_errors_in_play(play_schema):
    """Requests go through schemathesis's own in-process client, which runs the app's lifespan
    (the room's sweeper) on one event loop, as a server does; the live games are started through it too."""
    operations = [result.ok() for result in play_schema.get_all_operations() if result.ok().path.startswith("/api/play")]
    assert len(operations) == 4
    start, view = play_schema["/api/play"]["POST"], play_schema["/api/play/{session_id}"]["GET"]
    live: dict[str, object] = {}
    answered: list[int] = []

    def live_game() -> str:
        """A game in play (a new one when the last was closed or has ended)."""
        if live:
            now = view.Case(path_parameters={"session_id": live["id"]}).call()
            if now.status_code == 200 and not now.json()["done"]:
                return str(live["id"])
        started = start.Case(body={"game": "tictactoe", "opponent": "random", "name": "fuzz"}).call()
        assert started.status_code == 201, started.text
        live.update(started.json())
        return str(live["id"])

    close = play_schema["/api/play/{session_id}"]["DELETE"]

    def close_started(response) -> None:  # each start gets the client's share afresh
        if response.status_code == 201:
            assert close.Case(path_parameters={"session_id": response.json()["id"]}).call().status_code == 204

    for operation in operations:
        fuzz_operation(operation, PLAY_EXAMPLES_PER_OPERATION, answered=answered)
        if operation.path == "/api/play":  # seats, players, seeds and names against real games
            for game in ("tictactoe", "textarena:TicTacToe-v0"):
                fuzz_operation(operation, PLAY_EXAMPLES_PER_OPERATION // 2, body={"game": game, "opponent": "random"},
                               answered=answered, after=close_started)
        if "{session_id}" in operation.path:
            fuzz_operation(operation, PLAY_EXAMPLES_PER_OPERATION, session_id=live_game, answered=answered)
    # the fuzz reached the games, not only the refusals in front of them
    assert {200, 201, 204} <= set(answered) and {404, 422} <= set(answered), sorted(set(answered))
