"""The external services some tests need (PostgreSQL, Debian's Chromium), found or refused in one
place. scripts/test.sh installs and starts them and sets ARENA_REQUIRE_SERVICES=1 when it can (as
root, as in CI): then a missing service fails the test instead of skipping it, so a CI run can
never go green with the PostgreSQL or browser tests silently left out."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

import pytest

CHROMIUM = "/usr/bin/chromium"


def missing(reason: str) -> None:
    """Skip for `reason`, or fail when the services were promised (ARENA_REQUIRE_SERVICES=1)."""
    if os.environ.get("ARENA_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{reason}, but ARENA_REQUIRE_SERVICES=1 (scripts/test.sh should have provided it)", pytrace=False)
    pytest.skip(reason)


def postgres_url() -> str:
    url = os.environ.get("ARENA_TEST_PG_URL")
    if not url:
        missing("ARENA_TEST_PG_URL not set (scripts/test.sh starts PostgreSQL and sets it)")
    return url  # type: ignore[return-value]


def chromium() -> str:
    if not Path(CHROMIUM).exists():
        missing("Debian's chromium is not installed (scripts/browser.sh installs it)")
    return CHROMIUM


@contextlib.contextmanager
def local_ray(cpus: int = 2) -> Iterator[None]:
    """A private Ray instance (no dashboard, no usage stats, quiet), shut down afterwards so later
    tests in the same process see no Ray."""
    import ray

    if ray.is_initialized():
        ray.shutdown()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
