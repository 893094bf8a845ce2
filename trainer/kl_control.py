"""The KL coefficient of each step: fixed, or adapted to a target (`algorithm.kl_target`).

PPO's adaptive KL penalty (Schulman et al. 2017, section 4): a step whose policy has drifted
from the reference by more than 1.5x the target doubles the coefficient, one that drifted by
less than the target / 1.5 halves it. Here the step's own update uses the new coefficient: its
drift is measured before the update, from the behaviour and reference log-probs the learner has
already computed (`measured_kl`), so a policy that leaps away in one step meets a stronger
magnet in that same step, not one step late.

Why: in Tic-Tac-Toe self-play the draw collapsed onto one cell in the steps where the KL to the
base leapt from ~0.3 to 1.2-1.6 (docs/experiments/tictactoe-choice-selfplay.md), while a fixed
coefficient of 0.1 bites only far past that; the run that improved held 0.1-0.4.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from trainer.config import AlgorithmSettings
from trainer.loss import k3

BAND = 1.5  # the coefficient moves only when the drift is outside [target / 1.5, 1.5 x target]
FACTOR = 2.0  # and then by this factor (PPO's choice for both)


def measured_kl(samples: Sequence[Any]) -> float | None:
    """The behaviour policy's KL to the reference over a step's turns (`behaviour_kl` of the
    reference's log-probs). None when no sample carries both (no reference pass ran)."""
    return behaviour_kl(samples, [sample.ref_logps for sample in samples])


def behaviour_kl(samples: Sequence[Any], others: Sequence[torch.Tensor | None]) -> float | None:
    """KL(behaviour || other) over a step's turns, `others[i]` being sample i's action log-probs
    under the other policy: each turn's mean k3 over its action tokens (drawn from the behaviour
    policy), averaged over turns (a merged sample counts `weight` times). None when no sample
    carries both log-probs."""
    total = turns = 0.0
    for sample, other in zip(samples, others, strict=True):
        if other is None or sample.old_logps is None:
            continue
        length = sample.action_length
        per_token = k3(other[:length].float(), sample.old_logps[:length].float())
        total += float(per_token.mean()) * sample.weight
        turns += sample.weight
    return total / turns if turns else None


def adapted_kl_coef(current: float, measured: float | None, algorithm: AlgorithmSettings) -> float:
    """The coefficient after a step whose drift was `measured`: unchanged without a target or a
    measurement; else doubled above the band, halved below it, within [kl_coef, kl_coef_max]
    (the configured kl_coef is the least magnet the run ever has)."""
    target = algorithm.kl_target
    if target is None or measured is None:
        return current
    if measured > target * BAND:
        current *= FACTOR
    elif measured < target / BAND:
        current /= FACTOR
    return min(max(current, algorithm.kl_coef), algorithm.kl_coef_max)
