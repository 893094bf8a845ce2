"""Signs of life while a local model works, for `arena play` in a terminal.

Loading the shipped model takes seconds and each move of a CPU model a second or more; without a
sign the terminal looks hung. On a terminal, a spinner shows while the model loads and while each
of its moves is generated (rich status: transient, gone once the move is printed). Piped into a
file or a log nothing is added: the output stays what it was.
"""

from __future__ import annotations

from typing import Callable

from rich.console import Console

from arena.policy import MoveRequest, Policy, PolicyReply, PolicySpec

LOCAL_KINDS = ("local", "hf")  # policy kinds that load and run a model in this process


def is_local_model(spec: str) -> bool:
    try:
        return PolicySpec.parse(spec).kind in LOCAL_KINDS
    except ValueError:  # a bad spec is reported by make_policy itself
        return False


def make_with_loading_sign(console: Console, spec: str, make: Callable[[str], Policy]) -> Policy:
    """`make(spec)`, with a spinner while a local model loads (on a terminal only)."""
    if not (console.is_terminal and is_local_model(spec)):
        return make(spec)
    with console.status(f"loading the model for {spec} ..."):
        return make(spec)


class ThinkingSpinner(Policy):
    """Shows `<name> is thinking ...` while the wrapped policy chooses a move; everything else,
    the record included (name, spec, provider), is the wrapped policy's."""

    def __init__(self, inner: Policy, console: Console) -> None:
        self.inner, self.console = inner, console
        self.spec, self.name, self.provider = inner.spec, inner.name, inner.provider

    async def act(self, request: MoveRequest) -> PolicyReply:
        with self.console.status(f"{self.name} (seat {request.player}) is thinking ..."):
            return await self.inner.act(request)

    async def close(self) -> None:
        await self.inner.close()


def with_thinking_signs(console: Console, policies: list[Policy], specs: list[str]) -> list[Policy]:
    """The policies, local models wrapped in a ThinkingSpinner when `console` is a terminal."""
    if not console.is_terminal:
        return policies
    return [ThinkingSpinner(p, console) if is_local_model(spec) else p for p, spec in zip(policies, specs)]
