"""No process outlives a command that started vLLM: kill -9, SIGTERM or Ctrl-C of serve-model, a
league, an evaluation, a training run or a match leaves nothing behind (issue 26).

Each command runs with a marker in its environment, which every process it starts inherits;
once vLLM is up in it (vLLM's native library is mapped), it is signalled, and within 30 s no
process may carry the marker. vLLM's engine core runs in the command's own process
(arena/llm/engines/vllm.py), so the check also asserts that vLLM started no child process that
stays (a helper such as `lscpu`, which exits on its own, is not one).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ARENA = [sys.executable, "-m", "llm_arena_cli"]
MARK = "ARENA_ORPHAN_PROBE"
DEADLINE_S = 30
START_TIMEOUT_S = 240
TRANSIENT_S = 10  # a helper child (lscpu) may outlive the check by this much on a loaded machine


def _vllm_missing() -> str | None:
    from arena.llm.engines.vllm import vllm_missing_reason

    return vllm_missing_reason()


def _marked(mark: str) -> list[int]:
    """Live processes whose environment holds `MARK=mark`."""
    needle = f"{MARK}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                status = (entry / "status").read_text()
                if "\nState:\tZ" not in status:  # a zombie holds no memory; its parent reaps it
                    found.append(int(entry.name))
        except OSError:  # it exited while we looked
            continue
    return found


def _vllm_loaded(mark: str) -> bool:
    """Whether vLLM's native library is mapped in any process of the command."""
    for pid in _marked(mark):
        try:
            if "/vllm/_C" in Path(f"/proc/{pid}/maps").read_text():
                return True
        except OSError:
            continue
    return False


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "(exited)"


def _others_that_stay(mark: str, pid: int) -> dict[int, str]:
    """Marked processes beside `pid` that are still there after TRANSIENT_S, with their command
    lines. vLLM's CPU worker runs `lscpu` through a shell while it starts: a child that exits on
    its own is no engine process, and on a loaded machine it can still be running at the check."""
    deadline = time.monotonic() + TRANSIENT_S
    while True:
        others = [other for other in _marked(mark) if other != pid]
        if not others or time.monotonic() > deadline:
            return {other: _command_line(other) for other in others}
        time.sleep(0.25)


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    league = tmp_path / "league.yaml"
    league.write_text(
        "name: orphans\nseed: 0\nscheduler: round_robin\nmatches_per_pair: 50\nconcurrency: 4\n"
        "games:\n  - id: tictactoe\npolicies:\n  - name: smol\n    spec: local,engine=vllm,max_new_tokens=8\n"
        "  - name: random\n    spec: random\n"
    )
    train = tmp_path / "train.yaml"
    train.write_text(
        f"name: orphans\noutput_dir: {tmp_path / 'runs'}\nsteps: 50\nseed: 0\ngames:\n  - id: tictactoe\n"
        "rollout:\n  engine: vllm\n  groups_per_step: 2\n  group_size: 2\n  max_new_tokens: 4\n"
        "checkpoint:\n  every: 100\n  register_in_league: false\nlogging:\n  wandb: false\n"
    )
    db = f"sqlite:///{tmp_path / 'store.db'}"
    return {
        "serve-model": [*ARENA, "serve-model", "local", "--engine", "vllm", "--port", "0"],
        "league": [*ARENA, "league", "run", str(league), "--db", db],
        "eval-suite": [*ARENA, "eval", "suite", "--policy", "local,engine=vllm,max_new_tokens=8", "--quick", "--db", db],
        "train": [*ARENA, "train", str(train)],
        "play": [*ARENA, "play", "tictactoe", "-p", "local,engine=vllm,max_new_tokens=8", "-p", "random", "--quiet"],
    }


COMMANDS = ("serve-model", "league", "eval-suite", "train", "play")
CASES = [(command, sig) for command in COMMANDS for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT)]


@pytest.mark.parametrize(("command", "sig"), CASES, ids=[f"{c}-{s.name}" for c, s in CASES])
def test_a_signalled_command_leaves_no_process_behind(command, sig, tmp_path):
    reason = _vllm_missing()
    if reason:
        pytest.skip(reason)
    mark = uuid.uuid4().hex
    env = {**os.environ, MARK: mark, "ARENA_LOCAL_ENGINE": ""}
    env.pop("VLLM_ENABLE_V1_MULTIPROCESSING", None)
    log = (tmp_path / "out.log").open("wb")
    # SIGINT as a terminal's Ctrl-C delivers it, even when the tests run in the background (where
    # the shell left SIGINT ignored, and Python would keep ignoring it)
    process = subprocess.Popen(
        _commands(tmp_path)[command], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        started = time.monotonic()
        while not _vllm_loaded(mark):
            assert process.poll() is None, f"{command} exited before vLLM started: {(tmp_path / 'out.log').read_text()[-2000:]}"
            assert time.monotonic() - started < START_TIMEOUT_S, f"vLLM did not start within {START_TIMEOUT_S} s"
            time.sleep(0.5)
        time.sleep(3)  # the engine is serving now (or loading its weights): either way, stop it mid-work
        others = _others_that_stay(mark, process.pid)
        assert not others, f"vLLM started a process of its own beside the command: {others}"
        process.send_signal(sig)
        deadline = time.monotonic() + DEADLINE_S
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.5)
        left = _marked(mark)
        assert not left, f"{command} after {sig.name}: processes {left} still alive after {DEADLINE_S} s"
    finally:  # whatever happened, nothing of this test may outlive it (children may still be starting)
        for _ in range(40):
            left = _marked(mark)
            if not left:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.25)
        process.wait(timeout=30)
        log.close()
