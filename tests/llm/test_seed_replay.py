"""`arena play --seed` replays a match of a sampling local model, on each engine: the same command
run twice, as separate processes (a fresh engine and a fresh prefix cache each time), plays the
same replies token for token; another seed plays other replies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

# temperature 1 and replies long enough that two different draws all but never agree
SPEC = "local,engine={engine},temperature=1.0,max_new_tokens=12"


def play(engine: str, seed: int, out: Path) -> list[str]:
    """One `arena play` in its own process; seat 0's replies as written."""
    env = dict(os.environ, VLLM_CPU_KVCACHE_SPACE="1")  # beside the test session's own engine
    command = [sys.executable, "-m", "llm_arena_cli", "play", "tictactoe", "-p", SPEC.format(engine=engine), "-p", "random",
               "--seed", str(seed), "--save", str(out), "--quiet"]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=420)
    except subprocess.TimeoutExpired as exc:  # vLLM's engine core once kept the process alive for ever
        pytest.fail(f"arena play on {engine} did not exit within {exc.timeout} s")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "force killing" not in done.stdout + done.stderr  # the engine was shut down, not killed
    record = json.loads(out.read_text())
    replies = [turn["raw"] for turn in record["turns"] if turn["player"] == 0]
    assert replies, record
    return replies


@pytest.mark.parametrize("engine", ["hf", "vllm"])
def test_the_same_seed_replays_a_local_models_match(engine, tmp_path):
    if engine == "vllm":
        from arena.llm.engines.vllm import vllm_missing_reason

        reason = vllm_missing_reason()
        if reason:
            pytest.skip(reason)
    first = play(engine, 4, tmp_path / "first.json")
    assert play(engine, 4, tmp_path / "again.json") == first
    if engine == "hf":  # the draws do depend on the seed (vLLM's per-request seeds: test_vllm.py)
        assert play(engine, 5, tmp_path / "other.json") != first
