"""The Atropos hub (`atroposlib`'s unmodified run-api) on 127.0.0.1, for the tests that push
scored groups to it: tests/trainer/test_atropos.py and the training step's rollout sink."""

import subprocess
import sys
import time

import httpx
import pytest

from tests.local_server import free_port
from tests.services import missing, missing_part

REGISTRATION = {"wandb_group": "g", "wandb_project": "p", "batch_size": 8, "max_token_len": 64, "checkpoint_dir": "",
                "save_checkpoint_interval": 0, "starting_step": 0, "num_steps": 1}


ATROPOS_MISSING = "atroposlib is not installed (it is in the dev extra: make setup, or pip install -e '.[dev]')"


def _atropos_installed() -> bool:
    try:
        import atroposlib  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture
def hub():
    """The unmodified Atropos hub, as its `run-api` console script starts it. Without atroposlib:
    a skip, or a failure where the suite promised everything (ARENA_REQUIRE_SERVICES=1, CI)."""
    if not _atropos_installed():
        missing(ATROPOS_MISSING)
    yield from _run_hub()


@pytest.fixture
def hub_if_installed():
    """The hub, or None in a venv set up before atroposlib joined the dev extra, so the training
    step, which checks much more than the sink, still runs there (with a warning in the summary).
    Where the suite promised everything (ARENA_REQUIRE_SERVICES=1, CI) a missing atroposlib fails."""
    if not _atropos_installed():
        missing_part(ATROPOS_MISSING, "the training step's Atropos sink")
        yield None
        return
    yield from _run_hub()


def _run_hub():
    port = free_port()
    process = subprocess.Popen([sys.executable, "-c", "from atroposlib.cli.run_api import main; main()", "--host", "127.0.0.1", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # it logs every request
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(url + "/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            pytest.fail("run-api did not answer on " + url)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)
