"""The match log as ratings see it: who sat where, and how they ranked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

from arena.match import MatchRecord


@dataclass(frozen=True)
class GameResult:
    match_id: str
    game_id: str
    players: tuple[str, ...]  # policy names by seat
    ranks: tuple[int, ...]  # 1 = best; tied players share a rank

    @classmethod
    def from_record(cls, record: MatchRecord) -> "GameResult":
        if record.outcome is None:
            raise ValueError(f"match {record.match_id} has no result ({record.status})")
        return cls(record.match_id, record.game_id, tuple(record.policies), tuple(record.outcome["ranks"]))


def pairwise(result: GameResult) -> Iterator[tuple[str, str, float]]:
    """(a, b, score of a against b) for every pair of seats: 1 win, 0.5 tie, 0 loss.
    A multi-player game counts as all its pairwise comparisons; a policy against itself counts
    for nothing (self-play says nothing about relative strength)."""
    seats = list(zip(result.players, result.ranks))
    for i in range(len(seats)):
        for j in range(i + 1, len(seats)):
            (a, rank_a), (b, rank_b) = seats[i], seats[j]
            if a == b:
                continue
            yield a, b, 1.0 if rank_a < rank_b else 0.5 if rank_a == rank_b else 0.0


def for_game(results: Sequence[GameResult], game: str | None) -> list[GameResult]:
    return list(results) if game is None else [r for r in results if r.game_id == game]
