"""A deadline for every call into a game's code, for games that clients can reach.

A game is code we did not always write (TextArena's, with client-chosen options): one call can
loop forever or build a gigantic board. `GuardedGame` wraps a game so that each attribute read and
method call made on the episode's own thread is registered with one process-wide `Watchdog`; a call
still running past its deadline gets `GameOverrun` raised inside it with
`PyThreadState_SetAsyncExc`. That interrupts pure-Python loops (TextArena's games are Python); code
stuck inside C never sees the exception, and its thread is then left behind (episode threads are
daemons, so the process can still exit) and counted in `Watchdog.abandoned`.

`GameOverrun` derives from BaseException so that the match driver's `except Exception` (a failing
policy is a lost move) does not swallow it: the episode ends, the server goes on.
"""

from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

DEFAULT_GAME_CALL_TIMEOUT = 5.0  # seconds; every shipped game answers a call in milliseconds
WATCHDOG_TICK = 0.05  # seconds between the watchdog's looks at the running calls


class GameOverrun(BaseException):
    """Raised inside a game call that ran past its deadline (asynchronously, by the watchdog)."""


@dataclass
class _Call:
    label: str  # "step", "observe", ...
    deadline: float  # time.monotonic() past which the call is interrupted
    depth: int = 1  # nested guarded calls on the same thread keep the outermost deadline
    interrupted: bool = False


OverrunHandler = Callable[[str], None]


class Watchdog:
    """The process's single watcher of guarded calls, one daemon thread started on first use."""

    def __init__(self, tick: float = WATCHDOG_TICK) -> None:
        self.tick = tick
        self.abandoned = 0  # episode threads that did not unwind after an overrun (stuck in C code)
        self._lock = threading.Lock()
        self._calls: dict[int, _Call] = {}  # thread id -> its running guarded call
        self._handlers: dict[int, tuple[float, OverrunHandler]] = {}  # thread id -> (timeout, on_overrun)
        self._thread: threading.Thread | None = None

    def watch(self, thread_id: int, timeout: float, on_overrun: OverrunHandler) -> None:
        """Guard the calls made on `thread_id`; `on_overrun(message)` is told (from the watchdog's
        thread) when one overruns, after the exception was raised in it."""
        with self._lock:
            self._handlers[thread_id] = (timeout, on_overrun)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="game-call-watchdog", daemon=True)
                self._thread.start()

    def unwatch(self, thread_id: int) -> None:
        with self._lock:
            self._handlers.pop(thread_id, None)
            self._calls.pop(thread_id, None)

    def enter(self, thread_id: int, label: str) -> bool:
        """Mark a call starting on `thread_id`; False when that thread is not watched."""
        with self._lock:
            handler = self._handlers.get(thread_id)
            if handler is None:
                return False
            call = self._calls.get(thread_id)
            if call is not None:
                call.depth += 1
            else:
                self._calls[thread_id] = _Call(label, time.monotonic() + handler[0])
            return True

    def leave(self, thread_id: int) -> None:
        with self._lock:
            call = self._calls.get(thread_id)
            if call is not None and not call.interrupted:
                call.depth -= 1
                if call.depth <= 0:
                    del self._calls[thread_id]

    def _run(self) -> None:
        while True:
            time.sleep(self.tick)
            now = time.monotonic()
            overrun: list[tuple[OverrunHandler, str]] = []
            with self._lock:
                for thread_id, call in self._calls.items():
                    if call.interrupted or now < call.deadline:
                        continue
                    timeout, handler = self._handlers[thread_id]
                    call.interrupted = True  # under the lock: the call cannot end between check and raise
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(GameOverrun))
                    overrun.append((handler, f"game call {call.label} took over {timeout:g}s"))
            for handler, message in overrun:
                try:
                    handler(message)
                except Exception:
                    pass  # a handler's trouble must not stop the watchdog guarding every other episode


WATCHDOG = Watchdog()


def guarded_call(thread_id: int, label: str, function: Callable[..., Any], *args: Any, watchdog: Watchdog | None = None, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)` under the deadline, when called on the watched `thread_id` (a
    game's constructor, before there is a game to wrap)."""
    watchdog = watchdog or WATCHDOG
    entered = threading.get_ident() == thread_id and watchdog.enter(thread_id, label)
    try:
        return function(*args, **kwargs)
    finally:
        if entered:
            watchdog.leave(thread_id)


class GuardedGame:
    """A game whose every attribute read and call on `thread_id` runs under the watchdog's deadline.
    Reads from other threads (a caller peeking at `id`) pass straight through, unguarded."""

    def __init__(self, game: Any, thread_id: int, watchdog: Watchdog = WATCHDOG) -> None:
        object.__setattr__(self, "_game", game)
        object.__setattr__(self, "_thread_id", thread_id)
        object.__setattr__(self, "_watchdog", watchdog)

    @property
    def unguarded(self) -> Any:
        return self._game

    def __getattr__(self, name: str) -> Any:
        game, watchdog, thread_id = self._game, self._watchdog, self._thread_id
        if threading.get_ident() != thread_id:
            return getattr(game, name)
        guarded = watchdog.enter(thread_id, name)
        try:
            value = getattr(game, name)  # a property is game code too
        finally:
            if guarded:
                watchdog.leave(thread_id)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            entered = threading.get_ident() == thread_id and watchdog.enter(thread_id, name)
            try:
                return value(*args, **kwargs)
            finally:
                if entered:
                    watchdog.leave(thread_id)

        return call

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._game, name, value)
