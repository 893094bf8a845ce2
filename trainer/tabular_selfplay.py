"""Self-play with one free logit per (information set, move): the reference learner for
bench/strategy.py's self-play (used by bench/experiments/tabular_reference.py and card_separation.py).

`arena train` in choice mode updates a LoRA shared by every decision, so a step that moves one
information set moves the others too (bench/experiments/card_separation.py measures how much:
the LoRA gradients of two information sets that differ only in the card have cosine 0.997,
docs/experiments/kuhn-selfplay.md). This learner
has no such coupling: each information set has its own logits. It plays the same hands the LLM
run plays (GRPO groups of one deal, both seats trained), from the same start (the base model's
strategy) and with the same per-decision loss as trainer.loss on a choice sample, one epoch:

    -A * log pi(a) + kl_coef * k3(pi_ref(a) / pi(a)) - entropy_coef * H(pi)

with Adam on the logits. What it reaches in a given number of hands is what sampled self-play can
reach there when state separation is free: the ceiling the LLM run is measured against.
"""

from __future__ import annotations

import math
import random
import statistics
from dataclasses import dataclass
from typing import Callable, Mapping

from evaluation.exploitability import GameTree, InfoKey, Node, Strategy, evaluate
from arena.policy import public_text
from trainer.advantages import private_contrast, state_baseline
from trainer.config import AlgorithmSettings
from trainer.schedule import scheduled_learning_rate

PROBABILITY_FLOOR = 1e-9  # a start probability of 0 becomes this, so its logit is finite
GROUP_STD_EPS = 1e-4  # as trainer.advantages


@dataclass(frozen=True)
class SelfPlaySettings:
    steps: int
    deals_per_step: int  # GRPO groups per step
    hands_per_deal: int  # hands in a group
    learning_rate: float  # Adam's, on the logits
    kl_coef: float = 0.0
    entropy_coef: float = 0.0
    seed: int = 0
    state_baseline: bool = False  # trainer.advantages.state_baseline, as `algorithm.state_baseline`
    lr_final_fraction: float | None = None  # a cosine schedule to this fraction, as `algorithm.lr_schedule: cosine`
    private_contrast: float = 0.0  # trainer.advantages.private_contrast, as `algorithm.private_contrast`


    def __post_init__(self) -> None:
        if not 0 <= self.private_contrast <= 1:
            raise ValueError(f"private_contrast must be in [0, 1], got {self.private_contrast}")


@dataclass
class SelfPlayRun:
    curve: list[float]  # exploitability after each step, the start's first
    strategy: dict[InfoKey, dict[str, float]]  # the last step's


class Adam:
    """torch.optim.Adam's update (no weight decay) on a list of floats."""

    def __init__(self, size: int, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.lr, self.betas, self.eps = lr, betas, eps
        self.m, self.v, self.t = [0.0] * size, [0.0] * size, 0

    def step(self, params: list[float], grads: list[float]) -> None:
        self.t += 1
        adam_update(params, grads, self.m, self.v, self.t, self.lr, self.betas, self.eps)


def adam_update(params: list[float], grads: list[float], m: list[float], v: list[float], t: int, lr: float,
                betas: tuple[float, float], eps: float) -> None:
    """Adam's step `t` (1-based) on `params` in place, its moments `m` and `v` updated in place."""
    b1, b2 = betas
    for i, g in enumerate(grads):
        m[i] = b1 * m[i] + (1 - b1) * g
        v[i] = b2 * v[i] + (1 - b2) * g * g
        m_hat, v_hat = m[i] / (1 - b1**t), v[i] / (1 - b2**t)
        params[i] -= lr * m_hat / (math.sqrt(v_hat) + eps)


def softmax(logits: list[float]) -> list[float]:
    top = max(logits)
    weights = [math.exp(z - top) for z in logits]
    total = sum(weights)
    return [w / total for w in weights]


def decision_loss_gradient(
    logits: list[float], action: int, advantage: float, ref_logprob: float, kl_coef: float, entropy_coef: float
) -> list[float]:
    """d/dz of one decision's loss (module doc) at ratio 1, the first epoch's point."""
    p = softmax(logits)
    logp = math.log(p[action])
    # k3 = e^q - q - 1 with q = log pi_ref(a) - log pi(a): d k3 / d log pi(a) = 1 - e^q
    weight = -advantage + kl_coef * (1.0 - math.exp(ref_logprob - logp))
    grad = [weight * ((1.0 if j == action else 0.0) - pj) for j, pj in enumerate(p)]
    if entropy_coef:
        entropy = -sum(pj * math.log(pj) for pj in p if pj > 0)
        # dH/dz_j = -p_j (log p_j + H)
        grad = [g + entropy_coef * pj * (math.log(pj) + entropy) if pj > 0 else g for g, pj in zip(grad, p)]
    return grad


def _group_advantages(returns: list[float]) -> list[float]:
    mean = sum(returns) / len(returns)
    std = math.sqrt(sum((r - mean) ** 2 for r in returns) / len(returns))
    return [(r - mean) / (std + GROUP_STD_EPS) for r in returns]


def tabular_selfplay(tree: GameTree, start: Strategy, settings: SelfPlaySettings) -> SelfPlayRun:
    """Self-play from `start` for `settings.steps` steps; the exploitability after each."""
    rng = random.Random(settings.seed)
    keys = list(tree.infosets)
    moves = {k: tree.infosets[k].moves for k in keys}
    offset, size = {}, 0
    for k in keys:
        offset[k], size = size, size + len(moves[k])
    floored = {k: [max(start[k][m], PROBABILITY_FLOOR) for m in moves[k]] for k in keys}
    ref = {k: [math.log(p / sum(floored[k])) for p in floored[k]] for k in keys}  # log pi_ref, normalised
    params = [z for k in keys for z in ref[k]]
    adam = Adam(len(params), settings.learning_rate)
    public = public_states(tree)
    chances = [c for c, _ in tree.deals]
    roots = [root for _, root in tree.deals]

    def logits(k: InfoKey) -> list[float]:
        return params[offset[k] : offset[k] + len(moves[k])]

    def strategy() -> dict[InfoKey, dict[str, float]]:
        return {k: dict(zip(moves[k], softmax(logits(k)))) for k in keys}

    curve = [evaluate(tree, strategy()).exploitability]
    for step in range(1, settings.steps + 1):
        if settings.lr_final_fraction is not None:
            adam.lr = scheduled_learning_rate(AlgorithmSettings(learning_rate=settings.learning_rate, lr_schedule="cosine",
                                                                lr_final_fraction=settings.lr_final_fraction), step, settings.steps)
        grads = [0.0] * len(params)
        decisions = 0
        batch: list[tuple[list[tuple[InfoKey, int]], float]] = []
        for _ in range(settings.deals_per_step):
            root = rng.choices(roots, chances)[0]
            hands = [play_hand(root, logits, moves, rng) for _ in range(settings.hands_per_deal)]
            for seat in (0, 1):
                advantages = _group_advantages([utilities[seat] for _, utilities in hands])
                for (path, _), advantage in zip(hands, advantages):
                    batch.append(([(k, a) for k, a in path if k[0] == seat], advantage))
        decisions_of_batch = [(k, a, advantage) for path, advantage in batch for k, a in path]
        advantages = [advantage for _, _, advantage in decisions_of_batch]
        if settings.state_baseline:
            advantages = state_baseline(advantages, [k for k, _, _ in decisions_of_batch])
        if settings.private_contrast:
            advantages = private_contrast(advantages, [public[k] for k, _, _ in decisions_of_batch], [a for _, a, _ in decisions_of_batch],
                                          [k for k, _, _ in decisions_of_batch], settings.private_contrast)
        for (k, a, _), advantage in zip(decisions_of_batch, advantages):
            g = decision_loss_gradient(logits(k), a, advantage, ref[k][a], settings.kl_coef, settings.entropy_coef)
            for j, gj in enumerate(g):
                grads[offset[k] + j] += gj
            decisions += 1
        if decisions:
            adam.step(params, [g / decisions for g in grads])  # the loss is a mean over decisions
        curve.append(evaluate(tree, strategy()).exploitability)
    return SelfPlayRun(curve, strategy())


def public_states(tree: GameTree) -> dict[InfoKey, tuple[int, str]]:
    """Each information set's public state: its player and its view with the private card masked."""
    return {k: (k[0], public_text(k[1], info.request.private)) for k, info in tree.infosets.items()}


def play_hand(node: Node, logits: Callable[[InfoKey], list[float]], moves: Mapping[InfoKey, list[str]], rng: random.Random) -> tuple[list[tuple[InfoKey, int]], tuple[float, float]]:
    """One hand from a deal's root: the (information set, move index) path and the utilities."""
    path: list[tuple[InfoKey, int]] = []
    while node.key is not None:
        options = moves[node.key]
        index = rng.choices(range(len(options)), softmax(logits(node.key)))[0]
        path.append((node.key, index))
        node = node.children[options[index]]
    return path, node.utilities


REFERENCE_LEARNING_RATES = (0.03, 0.1, 0.3, 1.0)


def reference_sweep(
    tree: GameTree, start: Strategy, steps: int, deals_per_step: int, hands_per_deal: int,
    kl_coef: float = 0.0, entropy_coef: float = 0.0,
    learning_rates: tuple[float, ...] = REFERENCE_LEARNING_RATES, seeds: int = 20,
    state_baseline: bool = False, lr_final_fraction: float | None = None, private_contrast: float = 0.0,
) -> dict[float, list[float]]:
    """The final exploitability of `seeds` runs at each learning rate: the reference learner's
    spread, tuned after the fact (the LLM run gets no such sweep, so this favours the reference)."""
    return {
        lr: [tabular_selfplay(tree, start, SelfPlaySettings(steps, deals_per_step, hands_per_deal, lr, kl_coef, entropy_coef, seed,
                                                           state_baseline, lr_final_fraction, private_contrast)).curve[-1]
             for seed in range(seeds)]
        for lr in learning_rates
    }


def reference_figures(finals: Mapping[float, list[float]], base_exploitability: float, target_ratio: float = 0.5) -> dict[str, object]:
    """A sweep's headline figures, as ratios to the base's exploitability: the best learning
    rate's median, each rate's [median, 25%, 75%], and the share of the best rate's seeds that
    reach `target_ratio` (bench/strategy's target)."""
    ratios = {lr: sorted(x / base_exploitability for x in values) for lr, values in finals.items()}
    best = min(ratios, key=lambda lr: statistics.median(ratios[lr]))

    def quartiles(xs: list[float]) -> list[float]:
        q1, q2, q3 = statistics.quantiles(xs, n=4) if len(xs) > 1 else (xs[0],) * 3
        return [round(q2, 4), round(q1, 4), round(q3, 4)]

    return {
        "tabular_reference_ratio": round(statistics.median(ratios[best]), 4),
        "tabular_reference_learning_rate": best,
        "tabular_reference_reaching_target": round(sum(r <= target_ratio for r in ratios[best]) / len(ratios[best]), 4),
        "tabular_reference_ratio_by_lr": {str(lr): quartiles(xs) for lr, xs in ratios.items()},
    }
