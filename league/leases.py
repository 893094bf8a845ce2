"""Leases on running matches: which runner plays a match, and whether that runner is still alive.

Two runners may play one league at once (a user on two terminals, two Ray drivers, two machines on
one PostgreSQL). Each claims a match by writing its id as the match's `owner` and keeps a
heartbeat on every match it plays. Another runner replays a `running` match only when its lease
has expired: no heartbeat for `lease_s` seconds, or, on the same machine, the owner's process is
gone (so a league killed with `kill -9` resumes at once instead of waiting out the lease).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from typing import Callable

LEASE_SECONDS = 60.0  # a runner silent this long is presumed dead; its running matches are replayed
HEARTBEATS_PER_LEASE = 4  # a heartbeat every lease/4: three can be late before the lease lapses


_live_here: set[str] = set()  # runners of this process still running (a process may hold several)


def new_runner_id() -> str:
    """A fresh id, host:pid:nonce, alive until `retire`; the nonce tells apart two runners of one
    process and two runs of one (reused) pid."""
    runner_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    _live_here.add(runner_id)
    return runner_id


def retire(runner_id: str) -> None:
    _live_here.discard(runner_id)


def owner_is_dead(owner: str) -> bool:
    """True only when `owner` surely is gone: a runner of this machine whose process has exited.
    Runners of other machines (or unparsable ids) are judged by their heartbeat alone."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return owner not in _live_here  # an earlier runner of this very process that has ended
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    """A killed child that its parent has not reaped yet still answers kill(pid, 0)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


async def keep_alive(beat: Callable[[], object], lease_s: float) -> None:
    """Call `beat` every lease/4 seconds until cancelled. A failed beat (the store briefly away)
    is skipped: a lapsed lease costs at most a duplicate attempt, never a duplicate result."""
    while True:
        await asyncio.sleep(lease_s / HEARTBEATS_PER_LEASE)
        with contextlib.suppress(Exception):
            beat()
