"""`algorithm.max_update_kl`: the backtracking bound on each optimizer step (trainer/update_bound.py).
The line search on its own, with a measure the test controls, then on the learner: a step that
moves too far lands within the bound as a fresh forward measures it, and a bound no step reaches
leaves the update as it was."""

from __future__ import annotations

import random

import pytest
import torch

from trainer.config import AlgorithmSettings
from trainer.kl_control import behaviour_kl
from trainer.learner import Sample
from trainer.update_bound import bound_step


def _params(value: float) -> dict[str, torch.nn.Parameter]:
    return {"w": torch.nn.Parameter(torch.full((3,), value))}


def _distance_squared(params: dict[str, torch.nn.Parameter]):
    return lambda: float(params["w"].detach()[0]) ** 2  # the "KL" of a step from 0 to w: w^2


def test_a_step_within_the_bound_is_kept_as_it_is():
    params = _params(0.5)
    step = bound_step(params, {"w": torch.zeros(3)}, _distance_squared(params), max_kl=0.25, max_halvings=5)
    assert (step.kl, step.halvings, step.undone) == (0.25, 0, False)
    assert torch.equal(params["w"].detach(), torch.full((3,), 0.5))


def test_a_step_too_far_is_halved_until_it_lands_within_the_bound():
    params = _params(1.0)
    measured: list[float] = []
    measure = _distance_squared(params)
    step = bound_step(params, {"w": torch.zeros(3)}, lambda: measured.append(measure()) or measured[-1], max_kl=0.1, max_halvings=5)
    # w: 1 -> 1/2 -> 1/4 (KL 1, 1/4, 1/16): powers of two, exact in float32
    assert measured == [1.0, 0.25, 0.0625]
    assert (step.kl, step.halvings, step.undone) == (0.0625, 2, False)
    assert torch.equal(params["w"].detach(), torch.full((3,), 0.25))


def test_a_step_no_halving_brings_within_the_bound_is_undone():
    params = _params(1.0)
    before = {"w": torch.full((3,), -0.375)}
    step = bound_step(params, before, lambda: 1.0, max_kl=0.1, max_halvings=3)
    assert (step.kl, step.halvings, step.undone) == (0.0, 3, True)
    assert torch.equal(params["w"].detach(), before["w"])  # exactly the weights before the step


def test_the_kl_from_the_behaviour_policy_weighs_merged_turns():
    one = Sample([1], [2], 0.0, weight=3.0)
    one.old_logps = torch.tensor([-0.5])
    two = Sample([1], [2, 3], 0.0)
    two.old_logps = torch.tensor([-0.1, -1.0])
    others = [torch.tensor([-1.5]), torch.tensor([-0.1, -2.0])]
    k3 = lambda q: torch.exp(torch.tensor(q)) - q - 1  # noqa: E731  q = log other - log behaviour
    expected = (3 * k3(-1.0) + (k3(0.0) + k3(-1.0)) / 2) / 4
    # float32 log-probs of a few terms: a few ulps of 0.1
    assert behaviour_kl([one, two], others) == pytest.approx(float(expected), abs=1e-6)
    assert behaviour_kl([one, two], [None, None]) is None


CHAT = [{"role": "system", "content": "You play Kuhn poker."}, {"role": "user", "content": "Your card: K. Check or bet?"}]


def _choice_samples(learner) -> list[Sample]:
    prompt_ids, options = learner.engine.encode(CHAT), learner.engine.option_ids(["check", "bet"])
    return [Sample(prompt_ids, options[i], advantage=(-1.0, 1.0)[i], option_ids=options, chosen=i, choice_temperature=1.0) for i in (0, 1)]


@pytest.mark.slow
def test_the_learner_lands_a_long_step_within_the_bound_and_leaves_a_short_one(tmp_path):
    from tests.trainer.lora_learner import learner_with_active_lora

    # a learning rate no sane run uses: Adam's first step moves every LoRA weight by 0.05, far past the bound
    bound = 1e-3
    learner = learner_with_active_lora(tmp_path / "adapter", AlgorithmSettings(
        micro_batch_size=2, minibatch_size=2, epochs=1, learning_rate=5e-2, max_update_kl=bound, max_update_halvings=12))
    samples = _choice_samples(learner)
    before = {name: p.detach().clone() for name, p in learner.params.items()}
    stats = learner.update(samples, random.Random(0))
    assert stats["train/update_halvings"] >= 1 and stats["train/update_undone"] == 0.0
    assert 0.0 < stats["train/update_kl"] <= bound
    # a fresh forward of the landed weights reads the same KL from the behaviour policy
    assert learner._kl_from_behaviour(samples) == pytest.approx(stats["train/update_kl"], rel=1e-5, abs=1e-9)
    moved = max(float((learner.params[name].detach() - before[name]).abs().max()) for name in before)
    assert 0.0 < moved <= 5e-2 / 2 * (1 + 1e-5)  # at most half of Adam's first step (every weight by ~the rate), to float32 rounding

    # a bound the step stays within: the step is kept whole
    learner.settings = learner.settings.model_copy(update={"max_update_kl": 1e6})
    stats = learner.update(_choice_samples(learner), random.Random(0))
    assert stats["train/update_halvings"] == 0.0 and stats["train/update_kl"] > 0.0
