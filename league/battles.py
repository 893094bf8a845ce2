"""The match log as LMArena battles: one row per pairwise result, the format LMArena's own rating
code (`arena-rank`'s `PairDataset.from_pandas`) and FastChat's `elo_analysis.py` read, so anyone can
check our ratings with theirs.

Row: `model_a`, `model_b`, `winner` ("model_a", "model_b" or "tie"), plus `game_id`, `match_id`
and `weight`. A match is expanded exactly as our ratings see it (league/results.py): each distinct
policy once at its best rank (self-play seats collapse), then every pair of distinct policies in
seat order of first appearance (better rank wins, equal rank is a tie). `weight` = 1/(n-1) for a
match of n distinct policies, the weight our Bradley-Terry gives each of its comparisons (a
policy's comparisons in one match add up to one game); two-player matches weigh 1. Matches with
fewer than two distinct policies give no rows.
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

from league.results import GameResult, pairwise, standings

WINNER = {1.0: "model_a", 0.0: "model_b", 0.5: "tie"}


def battle_rows(results: Iterable[GameResult]) -> Iterator[dict[str, Any]]:
    """Battles in log order, pairs of one match in seat order."""
    for result in results:
        distinct = len(standings(result))
        for a, b, score in pairwise(result):
            yield {
                "model_a": a, "model_b": b, "winner": WINNER[score],
                "game_id": result.game_id, "match_id": result.match_id, "weight": 1.0 / (distinct - 1),
            }
