"""The reference learner (trainer.tabular_selfplay): its loss gradient and that its self-play learns."""

from __future__ import annotations

import math
import random

import pytest
import torch

from evaluation.exploitability import evaluate, uniform_strategy
from trainer.tabular_selfplay import Adam, SelfPlaySettings, decision_loss_gradient, reference_figures, reference_sweep, tabular_selfplay


@pytest.mark.parametrize("kl_coef, entropy_coef", [(0.0, 0.0), (0.3, 0.0), (0.0, 0.1), (0.2, 0.05)])
def test_gradient_is_that_of_the_trainers_choice_loss(kl_coef, entropy_coef) -> None:
    # The loss trainer.loss puts on a choice sample at ratio 1, by autograd.
    rng = random.Random(7)
    for _ in range(5):
        z = torch.tensor([rng.uniform(-2, 2) for _ in range(3)], dtype=torch.float64, requires_grad=True)
        action, advantage, ref = rng.randrange(3), rng.uniform(-2, 2), math.log(rng.uniform(0.05, 0.9))
        logp = torch.log_softmax(z, 0)
        q = ref - logp[action]
        loss = -advantage * logp[action] + kl_coef * (torch.exp(q) - q - 1) + entropy_coef * (logp.exp() * logp).sum()
        loss.backward()
        ours = decision_loss_gradient(z.tolist(), action, advantage, ref, kl_coef, entropy_coef)
        assert ours == pytest.approx(z.grad.tolist(), abs=1e-12)


def test_self_play_from_uniform_approaches_equilibrium(kuhn_tree) -> None:
    # Plain policy gradient cycles around the equilibrium in a zero-sum game; the KL to the start
    # (magnetic mirror descent's magnet) makes the last iterate settle near it.
    settings = SelfPlaySettings(steps=150, deals_per_step=8, hands_per_deal=4, learning_rate=0.03, kl_coef=0.3)
    run = tabular_selfplay(kuhn_tree, uniform_strategy(kuhn_tree), settings)
    assert run.curve[0] == pytest.approx(0.4583333, abs=1e-6)
    assert len(run.curve) == 151
    assert run.curve[-1] < 0.15  # a third of uniform's
    assert evaluate(kuhn_tree, run.strategy).exploitability == pytest.approx(run.curve[-1])


def test_runs_are_seeded_and_a_zero_learning_rate_keeps_the_start(kuhn_tree) -> None:
    start = uniform_strategy(kuhn_tree)
    settings = SelfPlaySettings(steps=5, deals_per_step=4, hands_per_deal=4, learning_rate=0.1, seed=3)
    assert tabular_selfplay(kuhn_tree, start, settings).curve == tabular_selfplay(kuhn_tree, start, settings).curve
    still = tabular_selfplay(kuhn_tree, start, SelfPlaySettings(steps=5, deals_per_step=4, hands_per_deal=4, learning_rate=0.0))
    assert still.curve == pytest.approx([still.curve[0]] * 6)
    for key, probs in still.strategy.items():
        assert probs == pytest.approx(start[key])


def test_sweep_reports_every_seed_at_every_learning_rate(kuhn_tree) -> None:
    finals = reference_sweep(kuhn_tree, uniform_strategy(kuhn_tree), steps=3, deals_per_step=2, hands_per_deal=2, learning_rates=(0.01, 0.1), seeds=4)
    assert sorted(finals) == [0.01, 0.1]
    assert all(len(v) == 4 and all(0 <= x <= 1 for x in v) for v in finals.values())
    assert len(set(finals[0.1])) > 1  # the seeds draw different hands


def test_sweep_passes_the_baseline_and_schedule_to_every_run(kuhn_tree) -> None:
    start = uniform_strategy(kuhn_tree)

    def finals(**recipe):
        return reference_sweep(kuhn_tree, start, steps=4, deals_per_step=4, hands_per_deal=4, learning_rates=(0.3,), seeds=2, **recipe)[0.3]

    def run(seed: int, **recipe):
        return tabular_selfplay(kuhn_tree, start, SelfPlaySettings(4, 4, 4, 0.3, seed=seed, **recipe)).curve[-1]

    recipe = {"state_baseline": True, "lr_final_fraction": 0.1}
    assert finals(**recipe) == [run(0, **recipe), run(1, **recipe)]
    assert finals() == [run(0), run(1)]
    assert finals(**recipe) != finals()  # the same hands, other updates


def test_reference_figures_pick_the_best_median_as_ratios() -> None:
    finals = {0.1: [0.1, 0.2, 0.3, 0.4], 1.0: [0.05, 0.3, 0.3, 0.5]}  # medians 0.25 and 0.3
    figures = reference_figures(finals, base_exploitability=0.5)
    assert figures["tabular_reference_learning_rate"] == 0.1
    assert figures["tabular_reference_ratio"] == pytest.approx(0.5)
    assert figures["tabular_reference_reaching_target"] == pytest.approx(0.5)  # ratios 0.2, 0.4 of 0.2, 0.4, 0.6, 0.8
    assert figures["tabular_reference_ratio_by_lr"]["1.0"][0] == pytest.approx(0.6)


def test_adam_matches_torch() -> None:
    params, reference = [0.5, -1.0, 2.0], torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    ours, theirs = Adam(3, 0.1), torch.optim.Adam([reference], lr=0.1)
    for step in range(5):
        grads = [math.sin(step + i) for i in range(3)]
        ours.step(params, grads)
        reference.grad = torch.tensor(grads, dtype=torch.float64)
        theirs.step()
    assert params == pytest.approx(reference.tolist(), abs=1e-12)


def test_kuhns_twelve_information_sets_are_four_public_states_of_three_cards(kuhn_tree) -> None:
    from collections import Counter

    from trainer.tabular_selfplay import public_states

    public = public_states(kuhn_tree)
    assert sorted(Counter(public.values()).values()) == [3, 3, 3, 3]
    assert all("<private>" in view and "Your card" not in view for _, view in public.values())


def test_the_private_contrast_reaches_the_run(kuhn_tree) -> None:
    start = uniform_strategy(kuhn_tree)
    plain = SelfPlaySettings(steps=4, deals_per_step=4, hands_per_deal=4, learning_rate=0.1, seed=1, state_baseline=True)
    contrasted = SelfPlaySettings(**{**plain.__dict__, "private_contrast": 1.0})
    assert tabular_selfplay(kuhn_tree, start, plain).curve != tabular_selfplay(kuhn_tree, start, contrasted).curve
