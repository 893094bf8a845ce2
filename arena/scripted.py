"""Policies that need no model: `random` (uniform legal move) and `bot` (the game's baseline).

Both are seeded from the match id, seat, turn and attempt, so a match replays identically.
"""

from __future__ import annotations

import random

from arena.policy import MoveRequest, Policy, PolicyReply, PolicySpec, register_kind, reject_unknown_params


def _rng(request: MoveRequest, salt: str) -> random.Random:
    obs = request.observation
    return random.Random(f"{salt}:{request.match_id}:{obs.player}:{obs.turn}:{request.attempt}")


class RandomPolicy(Policy):
    """Plays a uniformly random legal move (or the game's random valid text)."""

    provider = "scripted"

    def __init__(self, seed: str = "") -> None:
        self.seed = seed

    async def act(self, request: MoveRequest) -> PolicyReply:
        legal = request.legal_moves
        rng = _rng(request, f"random{self.seed}")
        if legal:
            move = rng.choice(legal)
        elif request.random_move is not None:
            move = request.random_move(rng)
        else:
            raise ValueError(f"{request.game_id}: no legal moves to choose from")
        return PolicyReply(action=move, raw=move)


class BotPolicy(Policy):
    """The game's scripted baseline (minimax, heuristics, equilibrium play; see each game)."""

    provider = "scripted"

    def __init__(self, seed: str = "") -> None:
        self.seed = seed

    async def act(self, request: MoveRequest) -> PolicyReply:
        if request.baseline is None:
            raise ValueError(f"{request.game_id}: this game has no scripted baseline")
        move = request.baseline(_rng(request, f"bot{self.seed}"))
        return PolicyReply(action=move, raw=move)


def _random(spec: PolicySpec) -> Policy:
    reject_unknown_params(spec, {"seed"})
    return RandomPolicy(spec.params.get("seed", ""))


def _bot(spec: PolicySpec) -> Policy:
    reject_unknown_params(spec, {"seed"})
    return BotPolicy(spec.params.get("seed", ""))


register_kind("random", _random, "random")
register_kind("bot", _bot, "bot")
