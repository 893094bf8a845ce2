"""Finding the move in what a model wrote. Replies are untrusted text: capped, matched, never eval'd.

Order for games with enumerable moves:
  1. the last `[...]` whose content names a legal move (`[e2e4]`, `[ E2E4 ]`, `[move: 4]`),
  2. else the last mention of a legal move anywhere in the reply,
  3. else the last bracketed text, or the whole reply, handed to the game as is: the game may
     accept notations the list does not spell out (SAN for UCI), and otherwise explains the
     rejection, which the model then sees.
Matching ignores case and whitespace, and a mention must not be glued to letters or digits
(`4` is not found inside `14`). Free-text games get the reply itself (capped): the game validates.
Reasoning blocks (`<think>...</think>`) are dropped first, so thinking aloud is never a move.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

MAX_SCAN_CHARS = 8000  # how much of a reply we look at
MAX_FREE_TEXT_CHARS = 2000  # what a free-text game receives at most
MAX_FALLBACK_CHARS = 200  # an unparseable reply handed to the game for its feedback

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|$)", re.IGNORECASE | re.DOTALL)
_BRACKETS = re.compile(r"\[([^\[\]\n]{1,200})\]")


@dataclass(frozen=True)
class ParsedMove:
    action: str  # what the game receives
    method: str  # "bracket" | "mention" | "structured" | "unmatched" | "free_text" | "empty"

    @property
    def matched(self) -> bool:
        return self.method in {"bracket", "mention", "structured"}


def strip_reasoning(text: str) -> str:
    return _THINK.sub(" ", text[:MAX_SCAN_CHARS])


def normalise(move: str) -> str:
    return re.sub(r"\s+", "", move).lower()


@lru_cache(maxsize=4096)
def _mention_pattern(move: str) -> re.Pattern[str]:
    """`move` anywhere, any case, optional whitespace between its characters, not glued to
    other letters or digits."""
    chars = [re.escape(c) for c in normalise(move)]
    return re.compile(r"(?<![0-9a-z])" + r"\s*".join(chars) + r"(?![0-9a-z])", re.IGNORECASE)


def last_mention(text: str, legal_moves: list[str]) -> str | None:
    """The legal move mentioned last in `text` (a longer move wins when two end together)."""
    best: tuple[int, int] | None = None
    best_move: str | None = None
    for move in legal_moves:
        if not normalise(move):
            continue
        for match in _mention_pattern(move).finditer(text):
            key = (match.end(), match.end() - match.start())
            if best is None or key > best:
                best, best_move = key, move
    return best_move


def parse_move(reply: str, legal_moves: list[str] | None) -> ParsedMove:
    """The move stated in a free-text reply (see the module docstring for the order)."""
    text = strip_reasoning(reply or "")
    if legal_moves is None:
        cleaned = text.strip()[:MAX_FREE_TEXT_CHARS]
        return ParsedMove(cleaned, "free_text" if cleaned else "empty")
    brackets = [m.group(1) for m in _BRACKETS.finditer(text)]
    for content in reversed(brackets):
        move = last_mention(content, legal_moves)
        if move is not None:
            return ParsedMove(move, "bracket")
    move = last_mention(text, legal_moves)
    if move is not None:
        return ParsedMove(move, "mention")
    if brackets:
        return ParsedMove(brackets[-1].strip()[:MAX_FALLBACK_CHARS], "unmatched")
    cleaned = text.strip()[:MAX_FALLBACK_CHARS]
    return ParsedMove(cleaned, "unmatched" if cleaned else "empty")


def parse_structured(arguments: str | None, content: str | None, legal_moves: list[str] | None) -> ParsedMove:
    """The move from a tool call's JSON arguments or a JSON reply ({"move": ...}).

    A provider that ignored the schema (plain prose, garbage, another key) falls back to the
    free-text parser over whatever it wrote.
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
        return parse_move(value, legal_moves)
    return parse_move(" ".join(s for s in (arguments, content) if s), legal_moves)


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
