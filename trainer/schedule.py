"""The learning rate of each step: constant, or a cosine from the configured rate down to
`lr_final_fraction` of it at the run's last step (`algorithm.lr_schedule`)."""

from __future__ import annotations

import math

from trainer.config import AlgorithmSettings


def scheduled_learning_rate(algorithm: AlgorithmSettings, step: int, steps: int) -> float:
    """The learning rate of `step` (1-based) of a `steps`-step run: constant, or cosine from the
    configured rate down to lr_final_fraction of it at the last step. A function of the step
    alone, so a resumed run continues the schedule where it stopped."""
    if algorithm.lr_schedule == "constant" or steps <= 1:
        return algorithm.learning_rate
    progress = min(max(step - 1, 0) / (steps - 1), 1.0)
    final = algorithm.lr_final_fraction
    return algorithm.learning_rate * (final + (1.0 - final) * 0.5 * (1.0 + math.cos(math.pi * progress)))
