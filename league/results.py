"""The match log as ratings see it: who sat where, and how they ranked.

Every rating system reads a result through the same two views, so they agree on edge cases:
- `standings`: each distinct policy once, at its best rank (a policy in several seats, as in
  self-play, is one competitor; its other seats say nothing about its strength against others).
- `pairwise`: the game as every pairwise comparison between distinct policies (1 win, 0.5 tie,
  0 loss). A result with fewer than two distinct policies gives no comparison and is not rated.
"""

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

    def __post_init__(self) -> None:
        if len(self.players) != len(self.ranks):
            raise ValueError(f"match {self.match_id}: {len(self.players)} players but {len(self.ranks)} ranks")
        if any(r != int(r) or r < 1 for r in self.ranks):
            raise ValueError(f"match {self.match_id}: ranks must be integers >= 1, got {self.ranks}")

    @classmethod
    def from_record(cls, record: MatchRecord) -> "GameResult":
        if record.outcome is None:
            raise ValueError(f"match {record.match_id} has no result ({record.status})")
        return cls(record.match_id, record.game_id, tuple(record.policies), tuple(int(r) for r in record.outcome["ranks"]))


def standings(result: GameResult) -> dict[str, int]:
    """Distinct policy -> its best rank, in seat order of first appearance."""
    best: dict[str, int] = {}
    for name, rank in zip(result.players, result.ranks):
        best[name] = min(rank, best.get(name, rank))
    return best


def is_rated(result: GameResult) -> bool:
    """Whether the result compares at least two different policies."""
    return len(set(result.players)) >= 2


def pairwise(result: GameResult) -> Iterator[tuple[str, str, float]]:
    """(a, b, score of a against b) for every pair of distinct policies: 1 win, 0.5 tie, 0 loss."""
    seats = list(standings(result).items())
    for i in range(len(seats)):
        for j in range(i + 1, len(seats)):
            (a, rank_a), (b, rank_b) = seats[i], seats[j]
            yield a, b, 1.0 if rank_a < rank_b else 0.5 if rank_a == rank_b else 0.0


def outcome_of(result: GameResult, policy: str) -> str:
    """'win' (sole first place), 'draw' (first place shared with another policy) or 'loss'."""
    best = standings(result)
    firsts = [name for name, rank in best.items() if rank == min(best.values())]
    if policy not in firsts:
        return "loss"
    return "win" if len(firsts) == 1 else "draw"


def for_game(results: Sequence[GameResult], game: str | None) -> list[GameResult]:
    return list(results) if game is None else [r for r in results if r.game_id == game]
