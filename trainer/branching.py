"""Branching rollouts (`rollout.branch`): GRPO groups that start from a position, not the reset.

A group's games share their seed, so its mean outcome is the value of where they start. In Kuhn
poker the deal is most of the state, and the group mean says something about each hand. In
Tic-Tac-Toe every group starts from the same empty board, where every opening keeps the draw. The
group then compares whole games of noise, and a board past the second move is seen once a step,
so the per-state baseline (trainer.advantages.state_baseline) cannot centre it either.

A branched group first replays the first t accepted moves of a game the learner played in the
previous step (t uniform over 1..n-1 of its n moves, the seed of that game), then its
`group_size` games play on from that position with fresh draws. The group mean is then the value
of that position under the current players. The first decision each game takes there is credited
with how much better it did than the others taken in the same place: a per-action signal at a
mid-game position, at no extra sampling cost (replayed moves cost nothing). It is VinePPO's idea,
Monte Carlo values of intermediate states (Kazemnejad et al. 2024), with the continuations shared
out as the group instead of sampled on top of it.

Replayed turns are not trained again (they were trained in the step that played them): they carry
`meta["replayed"]`, and Episode.turns and the reward terms leave them out. Replay needs a game that
is the same given its seed and its moves, as this repository's games are. Each replayed move is
checked against the observation it was first played in; where one differs (a game that draws chance
outside its seed), the seat stops replaying, plays on itself, and its reply says so
(`meta["replay_diverged"]`, counted in `rollout/replay_diverged`).
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from typing import Sequence

from arena.match import MatchRecord, TurnRecord
from arena.policy import MoveRequest, Policy, PolicyReply

REPLAYED = "replayed"
DIVERGED = "replay_diverged"


@dataclass(frozen=True)
class ReplayedMove:
    player: int
    observation: str  # what the player saw when the move was first played
    action: str
    raw: str


@dataclass(frozen=True)
class BranchPoint:
    seed: int
    prefix: tuple[ReplayedMove, ...]


def is_replayed(turn: TurnRecord) -> bool:
    return bool(turn.meta.get(REPLAYED))


def branch_point(record: MatchRecord, rng: random.Random) -> BranchPoint | None:
    """A position of `record`'s game to play on from: its first t accepted moves, t uniform over
    1..n-1 (the reset is an unbranched group, the last move ends the game). None for a game of
    fewer than 2 accepted moves or one that did not finish."""
    if record.status != "finished":
        return None
    accepted = [t for t in record.turns if t.valid and t.action is not None]
    if len(accepted) < 2:
        return None
    cut = rng.randint(1, len(accepted) - 1)
    return BranchPoint(record.seed, tuple(ReplayedMove(t.player, t.observation, t.action, t.raw) for t in accepted[:cut]))  # type: ignore[arg-type]


def choose_branch(records: Sequence[MatchRecord], game_id: str, rng: random.Random) -> BranchPoint | None:
    """A branch point in one of `records` of `game_id`, drawn uniformly; None if none has one."""
    candidates = [r for r in records if r.game_id == game_id]
    rng.shuffle(candidates)
    for record in candidates:
        point = branch_point(record, rng)
        if point is not None:
            return point
    return None


class ReplayPolicy(Policy):
    """Seat `player` of one branched game: its moves of the prefix first, then `inner`'s. One
    object per seat and game (it holds that game's replay queue)."""

    def __init__(self, inner: Policy, player: int, prefix: Sequence[ReplayedMove]):
        self.inner = inner
        self.spec, self.name, self.provider = inner.spec, inner.name, inner.provider
        self.queue: deque[ReplayedMove] = deque(m for m in prefix if m.player == player)

    async def act(self, request: MoveRequest) -> PolicyReply:
        if self.queue:
            move = self.queue.popleft()
            if move.observation == request.observation.text:
                return PolicyReply(move.action, raw=move.raw, meta={REPLAYED: True})
            self.queue.clear()
            reply = await self.inner.act(request)
            reply.meta[DIVERGED] = True
            return reply
        return await self.inner.act(request)

    async def move_distribution(self, request: MoveRequest) -> dict[str, float] | None:
        return await self.inner.move_distribution(request)

    async def close(self) -> None:
        """The inner policy is shared by other games; its owner closes it."""


def replay_seats(seats: Sequence[Policy], prefix: Sequence[ReplayedMove]) -> list[Policy]:
    """`seats` of a game that starts by replaying `prefix` (unchanged where it is empty)."""
    if not prefix:
        return list(seats)
    return [ReplayPolicy(policy, player, prefix) for player, policy in enumerate(seats)]


def diverged_games(records: Sequence[MatchRecord]) -> int:
    return sum(any(t.meta.get(DIVERGED) for t in r.turns) for r in records)
