"""scripts/gpu-check.sh, the first thing to run on a GPU, runs the same checks on the CPU here: so
the script a GPU machine relies on is exercised on every CI run (its CUDA-only assertions aside)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_every_check_passes_on_the_cpu(tmp_path):
    env = {**os.environ, "ARENA_LOCAL_ENGINE": "hf"}
    run = subprocess.run(["bash", str(ROOT / "scripts" / "gpu-check.sh"), "--device", "cpu", "--out", str(tmp_path)],
                         capture_output=True, text=True, env=env, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    lines = run.stdout.strip().splitlines()
    summary = json.loads(lines[-1])
    assert summary["gpu_check_failed"] == [] and summary["gpu_check_passed"] == 6, summary
    assert [line.split()[1] for line in lines[:-1]] == list(summary["checks"])
    assert all(line.startswith("PASS") for line in lines[:-1])
