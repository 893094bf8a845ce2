"""Schemathesis fuzzes the JSON API from the app's own OpenAPI schema, in process (ASGI): no
request, valid or not, may get a 5xx. Bounded so it stays well under a minute."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

pytestmark = pytest.mark.slow
EXAMPLES_PER_OPERATION = 40


@pytest.fixture(scope="module")
def schema(app):
    return schemathesis.openapi.from_asgi("/api/openapi.json", app)


def test_schema_lists_the_api(schema):
    paths = set(schema.raw_schema["paths"])
    assert {"/api/leaderboard", "/api/leaderboard.csv", "/api/matches", "/api/matches/{match_id}", "/api/h2h", "/api/live",
            "/api/leagues", "/api/policies/{name}", "/api/leagues/{name}/rerate"} <= paths


def test_no_server_errors(schema):
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 9
    for operation in operations:

        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def fuzz(case) -> None:
            response = case.call()
            assert response.status_code < 500, f"{case.method} {case.formatted_path} {case.query}: {response.status_code} {response.text[:300]}"

        fuzz()
