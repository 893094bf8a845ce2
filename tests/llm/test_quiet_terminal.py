"""A quiet terminal: the README's commands print no library warning or loading bar the user cannot
act on (vLLM's Triton note, its dispatcher's FutureWarnings, torch's NUMA note, shard-loading
bars); `arena --verbose` brings them back, and a VLLM_LOGGING_LEVEL the user sets wins for vLLM's
own logger (arena/llm/quiet.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

NOISE = ("Triton", "FutureWarning", "NUMA", "Loading safetensors", "it/s]", "WARNING", "INFO")
PLAY = ["play", "tictactoe", "-p", "local,engine=vllm,max_new_tokens=8", "-p", "bot", "--quiet"]


def _arena(*args: str, **env_vars: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("VLLM_LOGGING_LEVEL", "ARENA_VERBOSE", "TORCH_CPP_LOG_LEVEL")}
    return subprocess.run([sys.executable, "-m", "llm_arena_cli", *args], capture_output=True, text=True, env={**env, **env_vars}, timeout=600)


def test_a_match_on_vllm_prints_only_its_own_output_unless_verbose():
    from arena.llm.engines.vllm import vllm_missing_reason

    if vllm_missing_reason():
        pytest.skip(vllm_missing_reason())
    quiet = _arena(*PLAY)
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    printed = quiet.stdout + quiet.stderr  # vLLM's logger writes to stdout
    assert not [line for line in printed.splitlines() if any(word in line for word in NOISE)], printed
    assert "score" in quiet.stdout
    verbose = _arena("--verbose", *PLAY)
    assert verbose.returncode == 0 and "Triton" in verbose.stderr and "NUMA" in verbose.stderr, verbose.stderr[-2000:]
    # a level the user sets wins for vLLM's own logger, without --verbose (vLLM logs to stdout)
    chosen = _arena(*PLAY, VLLM_LOGGING_LEVEL="INFO")
    assert chosen.returncode == 0, chosen.stderr[-2000:]
    assert [line for line in chosen.stdout.splitlines() if " INFO " in line], chosen.stdout[-2000:]
