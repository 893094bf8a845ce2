"""The learning rate of each step: an optional linear warm-up, then constant, or a cosine from the
configured rate down to `lr_final_fraction` of it at the run's last step (`algorithm.lr_schedule`,
`algorithm.lr_warmup_steps`)."""

from __future__ import annotations

import math

from trainer.config import AlgorithmSettings


def scheduled_learning_rate(algorithm: AlgorithmSettings, step: int, steps: int) -> float:
    """The learning rate of `step` (1-based) of a `steps`-step run. The first lr_warmup_steps steps
    rise linearly, step k at k/(warm-up+1) of the rate (never 0: every step updates); then the
    rate is constant, or a cosine from the full rate down to lr_final_fraction of it at the last
    step. A function of the step alone, so a resumed run continues the schedule where it stopped."""
    warmup = algorithm.lr_warmup_steps
    if step <= warmup:
        return algorithm.learning_rate * step / (warmup + 1)
    if algorithm.lr_schedule == "constant" or steps - warmup <= 1:
        return algorithm.learning_rate
    progress = min(max(step - 1 - warmup, 0) / (steps - 1 - warmup), 1.0)
    final = algorithm.lr_final_fraction
    return algorithm.learning_rate * (final + (1.0 - final) * 0.5 * (1.0 + math.cos(math.pi * progress)))
