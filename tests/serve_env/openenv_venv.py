"""A venv with openenv-core 0.3.0 for the client-side tests (openenv-core is not a dependency of
the project: it pulls in gradio and fastmcp). Built once under .cache/openenv-client/ from PyPI;
$ARENA_OPENENV_PYTHON points at an existing interpreter instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

OPENENV_CORE = "openenv-core==0.3.0"
VENV = Path(__file__).resolve().parents[2] / ".cache" / "openenv-client"


def openenv_python() -> str:
    given = os.environ.get("ARENA_OPENENV_PYTHON")
    if given:
        return given
    python = VENV / "bin" / "python"
    marker = VENV / ".installed"
    if not marker.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        done = subprocess.run([str(python), "-m", "pip", "install", "-q", OPENENV_CORE], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.fail(f"could not install {OPENENV_CORE} into {VENV}: {done.stderr[-2000:]}")
        marker.write_text(OPENENV_CORE)
    return str(python)
