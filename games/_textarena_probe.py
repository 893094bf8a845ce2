"""Which TextArena games run here, and one line saying why for those that do not.

Each `-v0` env is built once and reset at 1..8 players; a failure is classified by its exception,
so a newer textarena or Python that fixes a game makes it available by itself. Results are cached
on disk per textarena version and Python minor version: listing reads the cache (and the installed
version from package metadata) without importing textarena, whose import alone takes seconds.

Nothing here may wait on the network: NLTK's downloader is replaced by a local lookup while
TextArena modules import (several call `nltk.download` at import time, which always fetches an
index over HTTP), and sockets get a short default timeout while probing. Set
ARENA_TEXTARENA_DOWNLOADS=1 to let those games download their data where there is network.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib.metadata
import json
import os
import random
import socket
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import numpy as np

PROBE_PLAYER_COUNTS = tuple(range(1, 9))
PROBE_VERSION = 3
NETWORK_TIMEOUT_S = 3.0

# True in a thread or task that is inside `quiet()`.
_muted: contextvars.ContextVar[bool] = contextvars.ContextVar("textarena_muted", default=False)


class _MutableStream:
    """Stands in for sys.stdout / sys.stderr: writes go to the stream it wraps, except from a thread
    or task inside `quiet()`. Swapping the process-wide stream per call (contextlib.redirect_stdout)
    is not safe once TextArena games run in several threads (a web server's worker threads, TRL's
    episode thread): the swaps' exits interleave and restore the wrong stream, and whatever another
    thread prints meanwhile (a match's result line) vanishes."""

    def __init__(self, wrapped: Any) -> None:
        self._wrapped = wrapped

    def write(self, text: str) -> int:
        return len(text) if _muted.get() else self._wrapped.write(text)

    def writelines(self, lines: Any) -> None:
        if not _muted.get():
            self._wrapped.writelines(lines)

    def flush(self) -> None:
        if not _muted.get():
            self._wrapped.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, ...: the wrapped stream's
        return getattr(self._wrapped, name)


def _wrap_stream(name: str) -> None:
    stream = getattr(sys, name)
    if not isinstance(stream, _MutableStream):
        setattr(sys, name, _MutableStream(stream))  # transparent outside quiet(): never swapped back


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """TextArena envs print while they build and play; keep the user's terminal clean. Only this
    thread's (or task's) writes are dropped: other threads print as usual."""
    _wrap_stream("stdout")
    _wrap_stream("stderr")
    token = _muted.set(True)
    try:
        yield
    finally:
        _muted.reset(token)


def _local_nltk_download(info_or_id: Any = None, *args: Any, **kwargs: Any) -> bool:
    """Stand-in for `nltk.download`: True when the data is installed, never touches the network.
    A game whose data is missing then fails with nltk's own LookupError, which we classify."""
    import nltk

    ids = [info_or_id] if isinstance(info_or_id, str) else list(info_or_id or [])
    for item in ids:
        for kind in ("corpora", "taggers", "tokenizers", "sentiment", "chunkers"):
            try:
                nltk.data.find(f"{kind}/{item}")
                break
            except LookupError:
                continue
        else:
            return False
    return True


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """No TextArena import or reset may wait on the network (see the module docstring)."""
    if os.environ.get("ARENA_TEXTARENA_DOWNLOADS") == "1":
        yield
        return
    import nltk

    saved_download, saved_timeout = nltk.download, socket.getdefaulttimeout()
    nltk.download = _local_nltk_download
    socket.setdefaulttimeout(NETWORK_TIMEOUT_S)
    try:
        yield
    finally:
        nltk.download = saved_download
        socket.setdefaulttimeout(saved_timeout)


def registry() -> dict[str, Any]:
    """TextArena's env registry (importing textarena takes a few seconds; done once)."""
    with quiet(), offline():
        from textarena.envs.registration import ENV_REGISTRY
    return ENV_REGISTRY


def classify(exc: BaseException) -> str:
    """One line a user can act on, from the exception an env raised at import or reset."""
    text = " ".join(str(exc).split())
    lowered = text.lower()
    if isinstance(exc, SyntaxError):
        return "needs Python 3.12+ (its code uses newer syntax)"
    if isinstance(exc, LookupError) and ("nltk" in lowered or "resource" in lowered):
        return "downloads NLTK data at run time (no network here; `python -m nltk.downloader words` installs it)"
    if "openrouter" in lowered:
        return "needs OPENROUTER_API_KEY for its judge model"
    if isinstance(exc, FileNotFoundError):
        return "data files missing from the textarena wheel"
    if isinstance(exc, (OSError, TimeoutError)) and ("timed out" in lowered or "connect" in lowered):
        return "needs network access at run time"
    if isinstance(exc, ImportError):
        return f"fails to import: {text.rsplit('Error: ', 1)[-1][:120]}"
    return f"fails to start: {type(exc).__name__}: {text[:120]}"


def probe_one(env_id: str) -> dict[str, Any]:
    """{"players": [counts that reset], "reason": why none did} for one env id."""
    import textarena as ta

    counts: list[int] = []
    reason = ""
    saved = random.getstate(), np.random.get_state()  # envs seed the global generators
    try:
        with quiet(), offline():
            for n in PROBE_PLAYER_COUNTS:
                try:
                    env = ta.make(env_id)  # fresh per count: a refused count can leave an env half-built
                except Exception as exc:  # noqa: BLE001 - whatever the env raised is what we report
                    return {"players": [], "reason": classify(exc)}
                try:
                    env.reset(num_players=n, seed=0)
                    counts.append(n)
                except (AssertionError, KeyError, IndexError, ValueError, TypeError) as exc:
                    # the usual ways an env refuses a player count; remember it in case none works
                    if "openrouter" in str(exc).lower():
                        return {"players": [], "reason": classify(exc)}
                    reason = reason or (classify(exc) if not isinstance(exc, AssertionError) else "")
                except Exception as exc:  # noqa: BLE001
                    return {"players": [], "reason": classify(exc)}
    finally:
        random.setstate(saved[0])
        np.random.set_state(saved[1])
    if counts:
        return {"players": counts, "reason": ""}
    span = f"{PROBE_PLAYER_COUNTS[0]}-{PROBE_PLAYER_COUNTS[-1]}"
    return {"players": [], "reason": reason or f"resets with none of {span} players"}


def textarena_version() -> str:
    try:
        return importlib.metadata.version("textarena")
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def cache_path() -> Path:
    base = os.environ.get("ARENA_CACHE_DIR") or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arena")
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    return Path(base) / f"textarena-probe-v{PROBE_VERSION}-{textarena_version()}-py{py}.json"


@lru_cache(maxsize=1)
def probe_all() -> dict[str, dict[str, Any]]:
    """env id -> probe result for every `-v0` id; read from the disk cache when it is there."""
    path = cache_path()
    try:
        cached = json.loads(path.read_text())
        if isinstance(cached, dict) and cached:
            return cached
    except (OSError, ValueError):
        pass
    if textarena_version() == "missing":
        return {}
    result = {env_id: probe_one(env_id) for env_id in sorted(registry()) if env_id.endswith("-v0")}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")  # concurrent first runs must not interleave
        tmp.write_text(json.dumps(result, indent=1, sort_keys=True))
        tmp.replace(path)
    except OSError:
        pass  # a read-only home only costs a re-probe next time
    return result
