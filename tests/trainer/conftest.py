"""The Atropos hub (`atroposlib`'s unmodified run-api) on 127.0.0.1, for the tests that push
scored groups to it: tests/trainer/test_atropos.py and the training step's rollout sink."""

import socket
import subprocess
import sys
import time

import httpx
import pytest

REGISTRATION = {"wandb_group": "g", "wandb_project": "p", "batch_size": 8, "max_token_len": 64, "checkpoint_dir": "",
                "save_checkpoint_interval": 0, "starting_step": 0, "num_steps": 1}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def hub():
    """The unmodified Atropos hub, as its `run-api` console script starts it."""
    pytest.importorskip("atroposlib", reason="atroposlib is in the dev extra: pip install -e '.[dev]'")
    yield from _run_hub()


@pytest.fixture
def hub_if_installed():
    """The hub, or None in a venv set up before atroposlib joined the dev extra (so the training
    step, which checks much more than the sink, still runs there)."""
    try:
        import atroposlib  # noqa: F401
    except ImportError:
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
