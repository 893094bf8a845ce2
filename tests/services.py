"""The external services and optional packages some tests need (PostgreSQL, Debian's Chromium,
Node, the dev extra's atroposlib and open_spiel), found or refused in one place. scripts/test.sh
installs and starts them and sets ARENA_REQUIRE_SERVICES=1 when it can (as root, as in CI): then a
missing one fails the test instead of skipping it, so a CI run can never go green with the
PostgreSQL, browser, Node-agent, Atropos or OpenSpiel tests silently left out."""

from __future__ import annotations

import contextlib
import os
import shutil
import warnings
from pathlib import Path
from typing import Iterator

import pytest

CHROMIUM = "/usr/bin/chromium"


def _required() -> bool:
    return os.environ.get("ARENA_REQUIRE_SERVICES") == "1"


def _fail_required(reason: str) -> None:
    pytest.fail(f"{reason}, but ARENA_REQUIRE_SERVICES=1 (scripts/test.sh should have provided it)", pytrace=False)


def missing(reason: str) -> None:
    """Skip for `reason`, or fail when the services were promised (ARENA_REQUIRE_SERVICES=1).
    Call it from a test or fixture: at module level a failure would stop the whole collection."""
    if _required():
        _fail_required(reason)
    pytest.skip(reason)


def missing_part(reason: str, part: str) -> None:
    """For a `part` a test can go on without (it checks much more): fail when the services were
    promised (ARENA_REQUIRE_SERVICES=1), else a warning in pytest's summary, never silence."""
    if _required():
        _fail_required(f"{reason} ({part} needs it)")
    warnings.warn(f"{reason}; {part} was left out", UserWarning, stacklevel=2)


def node() -> str:
    found = shutil.which("node")
    if found is None:
        missing("node is not installed (scripts/node.sh installs it)")
    return found  # type: ignore[return-value]


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
