"""Two report cards side by side (`arena eval compare`), or one line saying why they do not compare.

Cards compare when they come from the same suite, both full or both `--quick`, and the same
engine: a suite's anchors put both on one scale, but a local policy's moves depend on the engine
that made them (sampled policies draw from each engine's own generator), so a card made on vLLM
and one made on hf measure two things. A card written before cards named their engine (schema 1)
compares only with a card that names none either.

Whether two ratings differ is read from their 95% intervals: separated intervals support a
difference, overlapping ones do not rank the two.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class CardsDoNotCompare(ValueError):
    """One line: which card property differs, with both values."""


@dataclass(frozen=True)
class GameRow:
    game: str
    scores: tuple[float | None, float | None]


@dataclass(frozen=True)
class Comparison:
    suite: str
    quick: bool
    engine: str | None
    policies: tuple[str, str]
    ratings: tuple[dict[str, Any] | None, dict[str, Any] | None]
    games: list[GameRow]

    @property
    def separated(self) -> bool | None:
        """Whether the two ratings' 95% intervals are apart (None: a card has no rating)."""
        first, second = self.ratings
        if first is None or second is None:
            return None
        return first["hi"] < second["lo"] or second["hi"] < first["lo"]


def load_card(path: Path) -> dict[str, Any]:
    """A card written by `arena eval suite --json`, or CardsDoNotCompare naming the file's problem."""
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CardsDoNotCompare(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise CardsDoNotCompare(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    if not isinstance(card, dict) or not {"suite", "quick", "policy", "games"} <= set(card):
        raise CardsDoNotCompare(f"{path}: not a report card (written by `arena eval suite --json`)")
    return card


def compare_cards(first: dict[str, Any], second: dict[str, Any]) -> Comparison:
    """The two cards' ratings and per-game scores, or CardsDoNotCompare saying what differs."""
    for key, what in (("suite", "suites"), ("quick", "subsets (--quick or full)")):
        if first[key] != second[key]:
            raise CardsDoNotCompare(f"the cards come from different {what}: {first[key]!r} and {second[key]!r}")
    engines = (first.get("engine"), second.get("engine"))
    for engine in engines:
        if engine is not None and str(engine).startswith("mixed"):
            raise CardsDoNotCompare(f"a card was made on several engines ({engine}): it compares with nothing; evaluate again under a new --name")
    if engines[0] != engines[1]:
        raise CardsDoNotCompare(
            f"the cards were made on different engines ({engines[0] or 'none named'} and {engines[1] or 'none named'}): "
            "evaluate both with the same engine= to compare them"
        )
    scores = {game["game"]: [game.get("score"), None] for game in first["games"]}
    for game in second["games"]:
        scores.setdefault(game["game"], [None, None])[1] = game.get("score")
    return Comparison(
        suite=first["suite"], quick=bool(first["quick"]), engine=engines[0], policies=(first["policy"], second["policy"]),
        ratings=(first.get("rating"), second.get("rating")),
        games=[GameRow(game, (a, b)) for game, (a, b) in scores.items()],
    )
