"""How a command reports a user's mistake: one line on stderr, exit code 2.

It lives in the core package so that command modules anywhere (serve-model in arena.llm, the
`arena` command in llm_arena_cli) report mistakes the same way without importing the CLI above them.
"""

from __future__ import annotations

import typer
from rich.console import Console

from arena.redaction import redact

err_console = Console(stderr=True, highlight=False)


class UsageError(Exception):
    """A user mistake: printed as one line, exit code 2."""


def fail(message: str) -> "typer.Exit":
    err_console.print(f"error: {redact(message)}", markup=False, soft_wrap=True)  # a spec or URL in it may hold a key
    return typer.Exit(code=2)
