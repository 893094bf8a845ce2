"""Schemathesis fuzzes serve-model's API from its own OpenAPI schema, in process, on a fake engine:
no request, valid or not, may get a 5xx. Seeded and bounded."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from serve_model.server import create_app
from tests.serve_model.test_limits import CountingEngine

pytestmark = pytest.mark.slow
EXAMPLES_PER_OPERATION = 25


def test_no_server_errors():
    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(CountingEngine()))
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {"/v1/chat/completions", "/v1/models", "/health"}
    statuses: set[int] = set()
    for operation in operations:

        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def fuzz(case) -> None:
            response = case.call()
            statuses.add(response.status_code)
            assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:300]}"

        fuzz()
    assert 200 in statuses and any(400 <= s < 500 for s in statuses)  # the fuzz reached the routes and their refusals
