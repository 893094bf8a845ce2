"""`algorithm.kl_target`: PPO's adaptive KL coefficient (trainer/kl_control.py). The rule, the
drift it reads, that a step's own update uses the adapted coefficient, and that a resumed run
carries on with it."""

from __future__ import annotations

import asyncio
import math
import random

import pytest
import torch

from trainer import learner as learner_module
from trainer.checkpoints import list_checkpoints, load_state
from trainer.config import AlgorithmSettings, parse_config
from trainer.kl_control import adapted_kl_coef, measured_kl
from trainer.learner import Sample
from trainer.run import Trainer

TARGET = AlgorithmSettings(kl_coef=0.1, kl_target=0.2, kl_coef_max=1.0)


@pytest.mark.parametrize(
    "current, measured, expected",
    [
        (0.1, 0.31, 0.2),  # past 1.5 x 0.2: doubled
        (0.4, 0.29, 0.4),  # inside [0.2 / 1.5, 0.3]: kept
        (0.4, 0.14, 0.4),
        (0.4, 0.13, 0.2),  # under 0.2 / 1.5: halved
        (0.1, 0.0, 0.1),  # never under the configured kl_coef
        (0.8, 5.0, 1.0),  # nor over kl_coef_max
        (0.4, None, 0.4),  # no reference pass ran: nothing to adapt to
    ],
)
def test_the_coefficient_doubles_past_the_band_and_halves_under_it(current, measured, expected):
    assert adapted_kl_coef(current, measured, TARGET) == pytest.approx(expected)


def test_without_a_target_the_coefficient_stays():
    assert adapted_kl_coef(0.1, 9.0, AlgorithmSettings(kl_coef=0.1)) == 0.1


def _sample(old: list[float], ref: list[float] | None, weight: float = 1.0) -> Sample:
    sample = Sample(prompt_ids=[1, 2], completion_ids=list(range(len(old))), advantage=0.0, weight=weight)
    sample.old_logps = torch.tensor(old)
    sample.ref_logps = None if ref is None else torch.tensor(ref)
    return sample


def test_the_drift_is_the_turns_mean_k3_with_merged_samples_counted_by_weight():
    def k3(ref: float, old: float) -> float:
        return math.exp(ref - old) - (ref - old) - 1

    one_token = _sample([math.log(0.5)], [math.log(0.25)], weight=3.0)  # stands for three turns
    two_tokens = _sample([math.log(0.9), math.log(0.2)], [math.log(0.6), math.log(0.2)])
    expected = (3 * k3(math.log(0.25), math.log(0.5)) + (k3(math.log(0.6), math.log(0.9)) + 0.0) / 2) / 4
    # float32 log-probs of a few terms: a few ulps of 0.1
    assert measured_kl([one_token, two_tokens]) == pytest.approx(expected, abs=1e-6)
    assert measured_kl([_sample([0.0], [0.0])]) == 0.0  # the reference itself
    assert measured_kl([_sample([-1.0], None)]) is None


CHAT = [{"role": "system", "content": "You play Kuhn poker."}, {"role": "user", "content": "Your card: K. Check or bet?"}]


@pytest.mark.slow
def test_a_step_that_drifted_past_the_band_updates_with_the_doubled_coefficient(tmp_path, monkeypatch):
    from tests.trainer.lora_learner import learner_with_active_lora

    learner = learner_with_active_lora(tmp_path / "adapter", AlgorithmSettings(
        micro_batch_size=2, minibatch_size=2, epochs=1, kl_coef=0.1, kl_target=1e-6, learning_rate=1e-3))
    prompt_ids, options = learner.engine.encode(CHAT), learner.engine.option_ids(["check", "bet"])
    used: list[float] = []
    loss = learner_module.policy_loss
    monkeypatch.setattr(learner_module, "policy_loss", lambda *a, **k: used.append(k["kl_coef"]) or loss(*a, **k))
    samples = [Sample(prompt_ids, options[i], advantage=(-1.0, 1.0)[i], option_ids=options, chosen=i, choice_temperature=1.0) for i in (0, 1)]
    stats = learner.update(samples, random.Random(0))
    # the random LoRA moved the policy off the base by far more than 1.5e-6 before this update
    assert stats["train/kl"] > 1e-5
    assert used and set(used) == {0.2}  # every micro-batch of this update
    assert stats["train/kl_coef"] == 0.2 and learner.kl_coef == 0.2


def _config(tmp_path) -> dict:
    return {
        "name": "klt", "output_dir": str(tmp_path), "base": "local", "seed": 5, "steps": 3,
        "lora": {"r": 2, "alpha": 4, "target_modules": ["q_proj"]},
        "games": [{"id": "kuhn_poker", "options": {"hands": 1}}],
        "rollout": {"mode": "choice", "engine": "hf", "obs": "state", "temperature": 5.0, "groups_per_step": 2, "group_size": 2,
                    "in_flight": 4, "max_new_tokens": 4},
        "rewards": {"terms": [{"kind": "outcome", "mode": "score"}]},
        # a target no policy off the base stays under: the coefficient doubles every step from the second
        "algorithm": {"epochs": 1, "minibatch_size": 16, "micro_batch_size": 16, "learning_rate": 5e-2,
                      "kl_coef": 0.1, "kl_target": 1e-9},
        "checkpoint": {"every": 2, "register_in_league": False},
        "logging": {"wandb": False},
    }


@pytest.mark.slow
def test_a_resumed_run_carries_on_with_the_adapted_coefficient(tmp_path):
    trainer = Trainer(parse_config(_config(tmp_path), "test"))
    trainer.setup()
    try:
        coefficients = [asyncio.run(trainer.train_step()).metrics["train/kl_coef"] for _ in range(2)]
        # step 1 plays the base itself (a fresh LoRA adds zero): no drift, the floor; step 2 drifted
        assert coefficients == [0.1, 0.2] and trainer.learner.kl_coef == 0.2
        [(step, folder)] = list_checkpoints(tmp_path / "klt")
        assert step == 2 and load_state(folder)["kl_coef"] == 0.2
    finally:
        trainer.close()
    resumed = Trainer(parse_config(_config(tmp_path), "test"), resume=True)
    resumed.setup()
    try:
        assert resumed.step == 2 and resumed.learner.kl_coef == 0.2
    finally:
        resumed.close()
