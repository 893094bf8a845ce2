"""Policies that need no model: `random` (uniform legal move) and `bot` (the game's baseline).

Both draw from `arena.seeding.move_seed` (the match seed, seat, turn and attempt, or the spec's
`seed=` in place of the seat's), so the same match seed replays the same match.
"""

from __future__ import annotations

import random

from arena.policy import MoveRequest, Policy, PolicyReply, PolicySpec, reject_unknown_params
from arena.seeding import move_seed


def _rng(request: MoveRequest, salt: str, spec_seed: str) -> random.Random:
    return random.Random(f"{salt}:{move_seed(spec_seed, request)}")


class RandomPolicy(Policy):
    """Plays a uniformly random legal move (or the game's random valid text)."""

    provider = "scripted"

    def __init__(self, seed: str = "") -> None:
        self.seed = seed

    async def act(self, request: MoveRequest) -> PolicyReply:
        legal = request.legal_moves
        rng = _rng(request, "random", self.seed)
        if legal:
            move = rng.choice(legal)
        elif request.random_move is not None:
            move = request.random_move(rng)
        else:
            raise ValueError(f"{request.game_id}: no legal moves to choose from")
        return PolicyReply(action=move, raw=move)

    async def move_distribution(self, request: MoveRequest) -> dict[str, float] | None:
        legal = request.legal_moves
        return {move: 1.0 / len(legal) for move in legal} if legal else None


class BotPolicy(Policy):
    """The game's scripted baseline (minimax, heuristics, equilibrium play; see each game)."""

    provider = "scripted"

    def __init__(self, seed: str = "") -> None:
        self.seed = seed

    async def act(self, request: MoveRequest) -> PolicyReply:
        if request.baseline is None:
            raise ValueError(f"{request.game_id}: this game has no scripted baseline")
        move = request.baseline(_rng(request, "bot", self.seed))
        return PolicyReply(action=move, raw=move)

    async def move_distribution(self, request: MoveRequest) -> dict[str, float] | None:
        return request.baseline_distribution() if request.baseline_distribution is not None else None


def random_policy(spec: PolicySpec) -> Policy:
    reject_unknown_params(spec, {"seed"})
    return RandomPolicy(spec.params.get("seed", ""))


def bot_policy(spec: PolicySpec) -> Policy:
    reject_unknown_params(spec, {"seed"})
    return BotPolicy(spec.params.get("seed", ""))

