"""A bound on how far one optimizer step may move the policy (`algorithm.max_update_kl`).

After an optimizer step the learner measures the new policy's KL from the behaviour policy on the
step's own turns; while it is over the bound the step is halved (the weights go to before + 1/2^k
of the step: TRPO's backtracking line search, Schulman et al. 2015, appendix C), and if the
smallest step tried is still over, the weights stay where they were.

Why: in Tic-Tac-Toe self-play the draw collapsed onto one cell in a single update, from inside
the KL controller's band (docs/experiments/tictactoe-choice-selfplay.md). Adam moves each weight
by about the learning rate whatever the loss's size, so neither a KL penalty nor its adaptive
coefficient acts within the step that collapses; a bound on where the step lands does. Adam's
moments keep the full step's gradient: the line search changes only where the weights land.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class BoundedStep:
    kl: float  # the KL from the behaviour policy where the weights landed (0 if the step was undone)
    halvings: int  # how many times the step was halved
    undone: bool  # no step was small enough: the weights are the ones before the step

    def stats(self) -> dict[str, float]:
        """As the learner logs it (train/update_*)."""
        return {"update_kl": self.kl, "update_halvings": float(self.halvings), "update_undone": float(self.undone)}


NO_STEP = BoundedStep(0.0, 0, False)  # a step skipped for a non-finite gradient: nothing moved


def bound_step(
    params: Mapping[str, torch.nn.Parameter],
    before: Mapping[str, torch.Tensor],
    measure: Callable[[], float],
    max_kl: float,
    max_halvings: int,
) -> BoundedStep:
    """Bring the step from `before` to `params`' current values within `max_kl`, as `measure()`
    (the KL of the policy the weights now give) reads it; `params` are moved in place."""
    kl = measure()
    if kl <= max_kl:
        return BoundedStep(kl, 0, False)
    after = {name: p.detach().clone() for name, p in params.items()}
    for halvings in range(1, max_halvings + 1):
        _place(params, before, after, 0.5**halvings)
        kl = measure()
        if kl <= max_kl:
            return BoundedStep(kl, halvings, False)
    _place(params, before, after, 0.0)
    return BoundedStep(0.0, max_halvings, True)


def _place(params: Mapping[str, torch.nn.Parameter], before: Mapping[str, torch.Tensor], after: Mapping[str, torch.Tensor], fraction: float) -> None:
    with torch.no_grad():
        for name, param in params.items():
            param.copy_(torch.lerp(before[name], after[name], fraction))
