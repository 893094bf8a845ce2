"""Finding the move in what a model wrote. Replies are untrusted text: capped, matched, never eval'd.

The prompt asks for exactly one move in square brackets, and by default (strict) only an answer
in that format counts, so a reply the model never meant is not recorded as a move:
  1. the last `[...]` whose content names a legal move (`[e2e4]`, `[ E2E4 ]`, `[move: 4]`) is the
     answer; if it names several (`[1, 2, 5]`) its text goes to the game, which rejects it;
  2. else the last bracketed text, handed to the game as is: the game may accept notations the
     list does not spell out (SAN for UCI), and otherwise explains the rejection;
  3. no brackets at all: no move (method "unformatted"); the driver counts an invalid attempt
     whose feedback quotes the format (`ParsedMove.rejection`).
Lenient parsing (policy spec `parse=lenient`) inserts, before 2, the last mention of a legal move
anywhere in the reply (method "mention"); such a move is accepted by the game but is not a clean
reply (`arena.match.TurnRecord.clean`): leaderboards, exports and rewards count it as invalid.
Matching ignores case and whitespace, and a mention must not be glued to letters or digits
(`4` is not found inside `14`). Free-text games get the reply itself (capped): the game validates.
Reasoning (`<think>...</think>`, see reasoning.py) is set apart first, so thinking aloud is never
a move.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from arena.llm.reasoning import strip_reasoning

MAX_SCAN_CHARS = 8000  # how much of a reply we look at
MAX_FREE_TEXT_CHARS = 2000  # what a free-text game receives at most
MAX_FALLBACK_CHARS = 200  # an unparseable reply handed to the game for its feedback

_BRACKETS = re.compile(r"\[([^\[\]\n]{1,200})\]")


@dataclass(frozen=True)
class ParsedMove:
    action: str  # what the game receives (for a rejection: the start of the reply, for the record)
    method: str  # "bracket" | "mention" | "structured" | "choice" | "unmatched" | "unformatted" | "free_text" | "empty"
    rejection: str | None = None  # set when the reply holds no move: the feedback for the model

    @property
    def matched(self) -> bool:
        return self.method in {"bracket", "mention", "structured", "choice"}


def format_feedback(legal_moves: list[str]) -> str:
    """Why a reply without a bracketed move is refused, quoting the format the prompt asked for."""
    example = legal_moves[0] if legal_moves else "move"
    return f"no move in square brackets; reply with exactly one legal move in square brackets, for example [{example}]"


def normalise(move: str) -> str:
    return re.sub(r"\s+", "", move).lower()


@lru_cache(maxsize=4096)
def _mention_pattern(move: str) -> re.Pattern[str]:
    """`move` anywhere, any case, optional whitespace between its characters, not glued to
    other letters or digits."""
    chars = [re.escape(c) for c in normalise(move)]
    return re.compile(r"(?<![0-9a-z])" + r"\s*".join(chars) + r"(?![0-9a-z])", re.IGNORECASE)


def _mentions(text: str, legal_moves: list[str]) -> list[tuple[int, int, str]]:
    """(start, end, move) for every mention of a legal move in `text`."""
    found = []
    for move in legal_moves:
        if normalise(move):
            found.extend((m.start(), m.end(), move) for m in _mention_pattern(move).finditer(text))
    return found


def last_mention(text: str, legal_moves: list[str]) -> str | None:
    """The legal move mentioned last in `text` (a longer move wins when two end together)."""
    found = _mentions(text, legal_moves)
    if not found:
        return None
    return max(found, key=lambda f: (f[1], f[1] - f[0]))[2]


def named_moves(text: str, legal_moves: list[str]) -> set[str]:
    """The distinct legal moves `text` names, leaving out those only found inside a longer one
    (`3` inside `raise 3`)."""
    found = _mentions(text, legal_moves)
    return {
        move for start, end, move in found
        if not any(s <= start and end <= e and (e - s) > (end - start) for s, e, _ in found)
    }


def parse_move(reply: str, legal_moves: list[str] | None, *, lenient: bool = False) -> ParsedMove:
    """The move stated in a free-text reply (see the module docstring for the order)."""
    text = strip_reasoning(reply or "")[:MAX_SCAN_CHARS]
    if legal_moves is None:
        cleaned = text.strip()[:MAX_FREE_TEXT_CHARS]
        return ParsedMove(cleaned, "free_text" if cleaned else "empty")
    brackets = [m.group(1) for m in _BRACKETS.finditer(text)]
    for content in reversed(brackets):
        named = named_moves(content, legal_moves)
        if len(named) == 1:
            return ParsedMove(named.pop(), "bracket")
        if named:  # several moves in one answer: not one move; the game says why
            return ParsedMove(content.strip()[:MAX_FALLBACK_CHARS], "unmatched")
    if lenient:
        move = last_mention(text, legal_moves)
        if move is not None:
            return ParsedMove(move, "mention")
    if brackets:
        return ParsedMove(brackets[-1].strip()[:MAX_FALLBACK_CHARS], "unmatched")
    cleaned = text.strip()[:MAX_FALLBACK_CHARS]
    if lenient:
        return ParsedMove(cleaned, "unmatched" if cleaned else "empty")
    return ParsedMove(cleaned, "unformatted" if cleaned else "empty", rejection=format_feedback(legal_moves))


def parse_structured(
    arguments: str | None, content: str | None, legal_moves: list[str] | None, *, lenient: bool = False
) -> ParsedMove:
    """The move from a tool call's JSON arguments or a JSON reply ({"move": ...}).

    A provider that ignored the schema (plain prose, garbage, another key) falls back to the
    free-text parser over whatever it wrote, as strict or lenient as the policy asked.
    """
    for source in (arguments, content):
        value = _move_field(source)
        if value is None:
            continue
        if legal_moves is None:
            return ParsedMove(value[:MAX_FREE_TEXT_CHARS], "structured")
        exact = {normalise(m): m for m in legal_moves}.get(normalise(value))
        if exact is not None:
            return ParsedMove(exact, "structured")
        if lenient:
            return parse_move(value, legal_moves, lenient=True)
        # not one of the enumerated moves: the game judges it (it may accept SAN for UCI)
        return ParsedMove(value.strip()[:MAX_FALLBACK_CHARS], "unmatched")
    return parse_move(" ".join(s for s in (arguments, content) if s), legal_moves, lenient=lenient)


def _move_field(source: str | None) -> str | None:
    if not source:
        return None
    obj = _first_json_object(source[:MAX_SCAN_CHARS])
    if obj is None:
        return None
    value = obj.get("move")
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return str(value)
    return None


def _first_json_object(text: str) -> dict | None:
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None
