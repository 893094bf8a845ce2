"""Schemathesis fuzzes `arena serve-env`'s HTTP API from its own OpenAPI schema, in process (ASGI):
no request, valid or not, may get a 5xx. Seeded (derandomized) and bounded (about 25 examples per
operation) so the file stays well under a minute. The WebSocket /ws is not in an OpenAPI schema;
its edges are tested in test_serve_env.py and test_serve_env_security.py."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from serve_env.app import build_app
from serve_env.environment import ServeConfig

pytestmark = pytest.mark.slow
EXAMPLES_PER_OPERATION = 25
FUZZ_SETTINGS = dict(deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def schema():
    # TestClient's Host is "testserver"; a small per-client share, so fuzzed resets also meet the cap
    app = build_app(ServeConfig(allowed_hosts=["testserver"], max_sessions_per_client=2, game_call_timeout=2.0))
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def fuzz_operation(operation, examples: int, answered: list[int], body: dict | None = None) -> None:
    @settings(max_examples=examples, **FUZZ_SETTINGS)
    @given(case=operation.as_strategy())
    def fuzz(case) -> None:
        if body is not None and isinstance(case.body, dict):
            case.body = {**case.body, **body}
        response = case.call()
        answered.append(response.status_code)
        assert response.status_code < 500, f"{case.method} {case.formatted_path} {case.body!r:.200}: {response.status_code} {response.text[:300]}"

    fuzz()


def test_the_schema_lists_the_api(schema) -> None:
    paths = set(schema.raw_schema["paths"])
    assert {"/health", "/metadata", "/schema", "/reset", "/step", "/state", "/mcp"} <= paths


def test_no_server_errors(schema) -> None:
    answered: list[int] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 7
    for operation in operations:
        fuzz_operation(operation, EXAMPLES_PER_OPERATION, answered)
    assert 200 in answered and 403 not in answered  # the requests reached the routes, not the Host guard


def test_resets_of_real_games_with_fuzzed_fields(schema) -> None:
    """Generated fields over a real game and seat, so fuzzed options and opponents reach make_game."""
    answered: list[int] = []
    reset = schema["/reset"]["POST"]
    for game in ("tictactoe", "textarena:TicTacToe-v0"):
        fuzz_operation(reset, EXAMPLES_PER_OPERATION, answered, body={"game": game, "seat": 0})
    assert {200, 422} <= set(answered)  # some played, some were refused: both paths were reached
