"""Sampling seeds for policies, derived from the match seed, so one `--seed` replays a whole match.

The match seed fixes the game's chance (`Game.reset`). Each seat's policy samples from its own
seed: the spec's `seed=` where it sets one, else `seat_seed(match_seed, seat)`. Each move then
draws from `move_seed(...)`, so turns differ but a replay with the same match seed repeats every
draw. The match id is left out on purpose: `arena play` makes a fresh one per run. Anything that
takes a per-request seed (the local engine, vLLM, an OpenAI-compatible server) gets `move_seed`.
"""

from __future__ import annotations

import hashlib

from arena.policy import MoveRequest

SEED_BITS = 31  # non-negative and within int32: every engine and provider accepts it


def _hash_seed(text: str) -> int:
    """A seed from text, stable across processes and Python versions (unlike hash())."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big") & ((1 << SEED_BITS) - 1)


def seat_seed(match_seed: int, seat: int) -> int:
    """The sampling seed of the policy in `seat` of a match played with `match_seed`, when its
    spec sets none: seats of one match differ, and the same match seed gives the same seeds."""
    return _hash_seed(f"seat:{int(match_seed)}:{int(seat)}")


def move_seed(spec_seed: int | str | None, request: MoveRequest) -> int:
    """The seed of one draw: this seat's seed (the spec's, else `seat_seed`), the match seed, the
    turn and the attempt (a retry after an invalid move draws again)."""
    obs = request.observation
    base = spec_seed if spec_seed not in (None, "") else seat_seed(request.match_seed, obs.player)
    return _hash_seed(f"{base}:{request.match_seed}:{obs.player}:{obs.turn}:{request.attempt}")


def sample_seed(seed: int, index: int) -> int:
    """The seed of the `index`-th model call of one move (a vote's samples, rethink rounds): the
    move's seed for the first, so a single-draw policy draws exactly as before; derived for the rest."""
    return seed if index == 0 else _hash_seed(f"sample:{seed}:{index}")
