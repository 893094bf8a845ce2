"""Validation of game options (shared by the native games).

Options arrive from Python callers, YAML league configs or the command line, so integers may come
as numeric strings ("5") and lists as "3,4,5". Anything else is one clear GameError naming the
game, the option and the problem.
"""

from __future__ import annotations

import re
from typing import Any

from arena.game import GameError

_INT_TEXT = re.compile(r"[+-]?\d{1,9}")


def reject_unknown(game_id: str, options: dict[str, Any], allowed: tuple[str, ...]) -> None:
    """GameError naming every option `game_id` does not take."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = ", ".join(allowed) if allowed else "no options"
        raise GameError(f"{game_id}: unknown option(s) {', '.join(map(repr, unknown))}; it takes {takes}")


def int_option(game_id: str, name: str, value: Any, low: int, high: int) -> int:
    """`value` as an int in [low, high]; bools and fractional numbers are refused."""
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        number = int(value.strip())
    if number is None or not low <= number <= high:
        raise GameError(f"{game_id}: option {name!r} must be a whole number {low}-{high}, got {str(value)[:40]!r}")
    return number


def int_list_option(
    game_id: str, name: str, value: Any, low: int, high: int, min_len: int, max_len: int
) -> list[int]:
    """`value` (a list, or text like "3,4,5" / "3 4 5") as a list of ints each in [low, high]."""
    items: Any = value
    if isinstance(value, str):
        items = value.replace(",", " ").strip("[]() ").split()
    if not isinstance(items, (list, tuple)) or not min_len <= len(items) <= max_len:
        raise GameError(
            f"{game_id}: option {name!r} must be a list of {min_len}-{max_len} whole numbers, got {str(value)[:40]!r}"
        )
    return [int_option(game_id, f"{name}[{i}]", item, low, high) for i, item in enumerate(items)]
