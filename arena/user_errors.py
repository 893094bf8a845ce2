"""How a command reports a user's mistake: `raise fail("...")`, one line on stderr, exit code 2.

The error is a plain exception, with no CLI library behind it, so command modules in every package
(league, trainer, web, serve-env, serve-model, evaluation) raise it without importing the `arena`
command above them; that command (llm_arena_cli/app.py) prints it and sets the exit code.
"""

from __future__ import annotations

from arena.redaction import redact


class UsageError(Exception):
    """A user mistake: printed as one line, exit code 2. Its text may quote a spec or a URL that
    holds a key, so it is redacted here, once, whoever raises it."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


def fail(message: str) -> UsageError:
    """The error to raise for a user's mistake: `raise fail(f"--game {game!r}: ...")`."""
    return UsageError(message)
