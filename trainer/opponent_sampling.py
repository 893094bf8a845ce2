"""Opponent sampling for self-play training.

Modes:
- self: the current policy plays itself.
- latest: the most recent past checkpoint.
- uniform: uniformly over past checkpoints (fictitious self-play).
- pfsp: prioritized fictitious self-play (Vinyals et al. 2019, AlphaStar): opponent c is drawn
  with probability proportional to f(x_c), x_c = the learner's win rate against c, with
  f_hard(x) = (1 - x)^p (focus on opponents the learner still loses to) or
  f_var(x) = x (1 - x) (focus on opponents of similar strength).
Opponents without games yet get x = 0.5, so new checkpoints are tried.
"""

from __future__ import annotations

import random
from typing import Mapping, Sequence

MODES = ("self", "latest", "uniform", "pfsp")
WEIGHTINGS = ("hard", "var")


def pfsp_weight(win_rate: float, weighting: str = "hard", p: float = 2.0) -> float:
    if weighting == "hard":
        if p < 0:
            raise ValueError(f"PFSP exponent p must be >= 0, got {p}")
        return (1.0 - win_rate) ** p
    if weighting == "var":
        return win_rate * (1.0 - win_rate)
    raise ValueError(f"unknown PFSP weighting {weighting!r} (choose {', '.join(WEIGHTINGS)})")


def sample_opponents(
    candidates: Sequence[str],
    win_rate: Mapping[str, float],
    mode: str,
    rng: random.Random,
    k: int = 1,
    weighting: str = "hard",
    p: float = 2.0,
    current: str = "current",
) -> list[str]:
    """k opponents (with replacement). `candidates` are past checkpoints, oldest first."""
    if mode not in MODES:
        raise ValueError(f"unknown opponent sampling mode {mode!r} (choose {', '.join(MODES)})")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    bad = {c: x for c, x in win_rate.items() if not 0.0 <= x <= 1.0}
    if bad:
        name, value = next(iter(bad.items()))
        raise ValueError(f"win rate against {name!r} must be in [0, 1], got {value}")
    if mode == "self" or not candidates:
        return [current] * k
    if mode == "latest":
        return [candidates[-1]] * k
    if mode == "uniform":
        return [rng.choice(list(candidates)) for _ in range(k)]
    weights = [pfsp_weight(win_rate.get(c, 0.5), weighting, p) for c in candidates]
    if sum(weights) <= 0:  # the learner beats everyone: fall back to uniform
        weights = [1.0] * len(candidates)
    return rng.choices(list(candidates), weights=weights, k=k)
