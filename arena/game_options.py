"""Declared game options: what a game accepts, checked before any game code sees a value.

Options reach a game from Python callers, YAML configs, the command line and network clients
(serve-env, the play page), so a game declares each option it takes, with a type, a range or
choices, a default and a one-line description, plus cross-field checks (mines below a fraction of
the cells). `OptionSchema.validate` returns the cleaned options (defaults filled in) or raises
GameError with one line naming the game, the option and what is allowed:

    textarena:Minesweeper-v0: option num_mines=20: at most 8 for a 5x5 board (a third of the cells)

Anything undeclared is refused naming the options the game takes. Numbers may come as text ("5",
from a command line) and lists as "3,4,5"; a bool is never a number. The ranges are there to keep
a game small and finishing: a client must not be able to build a board that fills memory or a game
that never ends.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping

OptionKind = Literal["int", "float", "bool", "str", "choice", "int_list"]

_INT_TEXT = re.compile(r"[+-]?\d{1,18}")
_FLOAT_TEXT_MAX = 40  # characters of a number written as text
_SHOWN = 40  # characters of a refused value quoted back
_NAMES_SHOWN = 5  # unknown option names quoted back
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class _Refused(Exception):
    """An option's value is not allowed; the text says what is (caught and given its context)."""


@dataclass(frozen=True)
class Option:
    """One option a game takes. `low`/`high` bound a number (each item of an int_list);
    `choices` lists a choice's values; `min_items`/`max_items` bound an int_list's length;
    `max_length` bounds a str."""

    name: str
    kind: OptionKind
    default: Any
    description: str
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] = ()
    min_items: int = 1
    max_items: int = 1
    max_length: int = 100

    def clean(self, value: Any) -> Any:
        """`value` as this option's type, within its range; _Refused says what is allowed."""
        if self.kind == "int":
            return _whole_number(value, int(self.low), int(self.high))  # type: ignore[arg-type]
        if self.kind == "float":
            return _number(value, float(self.low), float(self.high))  # type: ignore[arg-type]
        if self.kind == "bool":
            return _flag(value)
        if self.kind == "str":
            return _text(value, self.max_length)
        if self.kind == "choice":
            return _choice(value, self.choices)
        return _whole_numbers(value, int(self.low), int(self.high), self.min_items, self.max_items)  # type: ignore[arg-type]

    def allowed(self) -> str:
        """The allowed values in a few words, for listings and refusals."""
        if self.kind == "int":
            return f"a whole number {_num(self.low)}-{_num(self.high)}"
        if self.kind == "float":
            return f"a number {_num(self.low)}-{_num(self.high)}"
        if self.kind == "bool":
            return "true or false"
        if self.kind == "str":
            return f"text of at most {self.max_length} characters"
        if self.kind == "choice":
            return "one of " + ", ".join(map(str, self.choices))
        return f"a list of {self.min_items}-{self.max_items} whole numbers, each {_num(self.low)}-{_num(self.high)}"

    def describe(self) -> dict[str, Any]:
        """JSON-able description (for servers, docs and listings)."""
        described: dict[str, Any] = {
            "name": self.name,
            "type": self.kind,
            "default": list(self.default) if isinstance(self.default, tuple) else self.default,
            "description": self.description,
            "allowed": self.allowed(),
        }
        if self.kind in ("int", "float", "int_list"):
            described["min"], described["max"] = self.low, self.high
        if self.kind == "int_list":
            described["min_items"], described["max_items"] = self.min_items, self.max_items
        if self.kind == "choice":
            described["choices"] = list(self.choices)
        if self.kind == "str":
            described["max_length"] = self.max_length
        return described


@dataclass(frozen=True)
class CrossCheck:
    """A rule over several options. `problem(values)` gets the cleaned options (defaults filled
    in) and returns what is wrong with `option`'s value ("at most 8 for a 5x5 board"), or None."""

    option: str
    description: str  # the rule in words, for listings: "num_mines: at most a third of rows x cols"
    problem: Callable[[dict[str, Any]], str | None]


@dataclass(frozen=True)
class OptionSchema:
    """Every option a game takes, and the rules between them. The empty schema takes none."""

    options: tuple[Option, ...] = ()
    checks: tuple[CrossCheck, ...] = ()

    def __post_init__(self) -> None:
        names = [o.name for o in self.options]
        if len(set(names)) != len(names):
            raise ValueError(f"an option is declared twice in {names}")
        for option in self.options:  # a default outside its own range is a bug in the declaration
            try:
                option.clean(option.default)
            except _Refused as exc:
                raise ValueError(f"option {option.name}: the default {option.default!r} is not allowed: {exc}") from None
        unknown = [c.option for c in self.checks if c.option not in names]
        if unknown:
            raise ValueError(f"checks name undeclared options {unknown}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(o.name for o in self.options)

    def defaults(self) -> dict[str, Any]:
        return {o.name: o.clean(o.default) for o in self.options}

    def validate(self, game_id: str, given: Mapping[str, Any] | None) -> dict[str, Any]:
        """The cleaned options, defaults filled in; GameError (one line) on anything not allowed."""
        from arena.game import GameError  # arena.game imports this module for NativeGame

        given = {} if given is None else given
        if not isinstance(given, Mapping):
            raise GameError(f"{game_id}: options must be a mapping of names to values, got {_shown(given)}")
        unknown = [name for name in given if name not in self.names]
        if unknown:
            shown = ", ".join(_shown(str(name)) for name in sorted(map(str, unknown))[:_NAMES_SHOWN])
            more = f" and {len(unknown) - _NAMES_SHOWN} more" if len(unknown) > _NAMES_SHOWN else ""
            if not self.options:
                raise GameError(f"{game_id} takes no options, got {shown}{more}")
            raise GameError(f"{game_id}: unknown option {shown}{more}; it takes {', '.join(self.names)}")
        values: dict[str, Any] = {}
        for option in self.options:
            value = given.get(option.name, option.default)
            try:
                values[option.name] = option.clean(value)
            except _Refused as exc:
                raise GameError(f"{game_id}: option {option.name}={_shown(value)}: {exc}") from None
        for check in self.checks:
            problem = check.problem(values)
            if problem is not None:
                raise GameError(f"{game_id}: option {check.option}={_shown(values[check.option])}: {problem}")
        return values

    def describe(self) -> dict[str, Any]:
        """JSON-able description: each option and each cross-field rule."""
        return {"options": [o.describe() for o in self.options], "checks": [c.description for c in self.checks]}


# ---- declaring -----------------------------------------------------------------------------------
def int_option(name: str, default: int, low: int, high: int, description: str) -> Option:
    return Option(name, "int", default, description, low=low, high=high)


def float_option(name: str, default: float, low: float, high: float, description: str) -> Option:
    return Option(name, "float", default, description, low=low, high=high)


def bool_option(name: str, default: bool, description: str) -> Option:
    return Option(name, "bool", default, description)


def str_option(name: str, default: str, max_length: int, description: str) -> Option:
    return Option(name, "str", default, description, max_length=max_length)


def choice_option(name: str, default: Any, choices: tuple[Any, ...], description: str) -> Option:
    return Option(name, "choice", default, description, choices=tuple(choices))


def int_list_option(
    name: str, default: tuple[int, ...], low: int, high: int, min_items: int, max_items: int, description: str
) -> Option:
    return Option(name, "int_list", tuple(default), description, low=low, high=high, min_items=min_items, max_items=max_items)


# ---- cleaning --------------------------------------------------------------------------------------
def _whole_number(value: Any, low: int, high: int) -> int:
    number: int | None = None
    if isinstance(value, bool):  # True is an int in Python; never a count
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and _INT_TEXT.fullmatch(value.strip()):
        number = int(value.strip())
    if number is None:
        raise _Refused(f"must be a whole number {low}-{high}")
    if not low <= number <= high:
        raise _Refused(f"must be {low}-{high}")
    return number


def _number(value: Any, low: float, high: float) -> float:
    number: float | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and len(value) <= _FLOAT_TEXT_MAX:
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number):
        raise _Refused(f"must be a number {_num(low)}-{_num(high)}")
    if not low <= number <= high:
        raise _Refused(f"must be {_num(low)}-{_num(high)}")
    return number


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise _Refused("must be true or false")


def _text(value: Any, max_length: int) -> str:
    if not isinstance(value, str):
        raise _Refused(f"must be text of at most {max_length} characters")
    if len(value) > max_length:
        raise _Refused(f"at most {max_length} characters, got {len(value)}")
    return value


def _choice(value: Any, choices: tuple[Any, ...]) -> Any:
    for choice in choices:
        if isinstance(choice, str):
            if isinstance(value, str) and value.strip().lower() == choice.lower():
                return choice
        elif isinstance(choice, int) and not isinstance(choice, bool):
            try:  # a whole-number choice takes what a whole-number option takes ("8", 8.0), never a bool
                if _whole_number(value, choice, choice) == choice:
                    return choice
            except _Refused:
                pass
        elif type(value) is type(choice) and value == choice:
            return choice
    raise _Refused("must be one of " + ", ".join(map(str, choices)))


def _whole_numbers(value: Any, low: int, high: int, min_items: int, max_items: int) -> list[int]:
    items: Any = value
    if isinstance(value, str):
        items = value.replace(",", " ").strip("[]() ").split() if len(value) <= 20 * max_items else None
    if not isinstance(items, (list, tuple)) or not min_items <= len(items) <= max_items:
        raise _Refused(f"must be a list of {min_items}-{max_items} whole numbers, each {low}-{high}")
    cleaned = []
    for index, item in enumerate(items):
        try:
            cleaned.append(_whole_number(item, low, high))
        except _Refused:
            raise _Refused(f"item {index + 1} ({_shown(item)}) must be a whole number {low}-{high}") from None
    return cleaned


def _num(number: float | None) -> str:
    return f"{number:g}" if isinstance(number, float) else str(number)


def _shown(value: Any) -> str:
    """`value` quoted back in a refusal, never longer than a line."""
    if isinstance(value, int) and value.bit_length() > 128:  # str() of a huge int is slow, or refused
        return "<a number too large to show>"
    try:
        text = str(value) if isinstance(value, (bool, int, float)) else repr(value)
    except (ValueError, RecursionError):  # a huge int inside a list, a deeply nested value
        return "<a value too large to show>"
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."
