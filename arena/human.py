"""`human`: a person plays in the terminal. Shows the player's own view, validates input locally
against the legal moves (when the game lists them) before anything reaches the game."""

from __future__ import annotations

import asyncio
import difflib
import threading
from typing import Callable

from rich.console import Console
from rich.panel import Panel

from arena.policy import MoveRequest, Policy, PolicyFailure, PolicyReply, PolicySpec, reject_unknown_params


class HumanPolicy(Policy):
    provider = "human"

    def __init__(self, console: Console | None = None, read_line: Callable[[str], str] = input) -> None:
        self.console = console or Console(highlight=False)
        self.read_line = read_line

    async def act(self, request: MoveRequest) -> PolicyReply:
        obs = request.observation
        title = f"{request.game_name}: your turn, {obs.role or f'player {obs.player}'}"
        self.console.print(Panel(obs.text, title=title, expand=False), markup=False)
        if obs.feedback:
            self.console.print(f"[yellow]{obs.feedback}[/yellow]")
        if obs.legal_moves:
            shown = ", ".join(obs.legal_moves[:40]) + (" ..." if len(obs.legal_moves) > 40 else "")
            self.console.print(f"Legal moves: {shown}", markup=False)
        while True:
            try:
                line = await _read_in_daemon_thread(self.read_line, "your move> ")
            except EOFError:
                raise PolicyFailure("input closed") from None
            move = line.strip()
            if not move:
                continue
            if move in {"?", "help"}:
                self.console.print(request.rules, markup=False)
                continue
            if obs.legal_moves is None or move in obs.legal_moves:
                return PolicyReply(action=move, raw=move)
            folded = {m.lower(): m for m in obs.legal_moves}
            if move.lower() in folded:
                return PolicyReply(action=folded[move.lower()], raw=move)
            close = difflib.get_close_matches(move, obs.legal_moves, n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else " Type ? for the rules."
            self.console.print(f"[red]{move!r} is not a legal move.[/red]{hint}", markup=True)


async def _read_in_daemon_thread(read_line: Callable[[str], str], prompt: str) -> str:
    """`read_line(prompt)` without blocking the event loop, in a daemon thread. Not in the loop's
    default executor: on Ctrl-C asyncio.run cancels the match and then waits for that executor,
    and a thread blocked in input() would keep the match (and the terminal) hanging until Enter."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def settle(value: str | None, error: BaseException | None) -> None:
        if answer.done():  # the match was cancelled meanwhile
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(value or "")

    def read() -> None:
        try:
            value, error = read_line(prompt), None
        except BaseException as exc:  # noqa: BLE001 - EOFError and friends go to the awaiting coroutine
            value, error = None, exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the loop is gone (the match ended): nobody waits for this line
            pass

    threading.Thread(target=read, name="human-input", daemon=True).start()
    return await answer


def human_policy(spec: PolicySpec) -> Policy:
    reject_unknown_params(spec, set())
    return HumanPolicy()

