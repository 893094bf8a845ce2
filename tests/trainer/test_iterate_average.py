"""`algorithm.average_from`: the uniform average of the adapter's iterates, saved beside each
checkpoint as a playable peft folder, restored on resume, and exactly the mean of the weights."""

from __future__ import annotations

import asyncio

import pytest
import torch

from trainer.checkpoints import AVERAGE_DIR, list_checkpoints
from trainer.config import parse_config
from trainer.run import Trainer

pytestmark = pytest.mark.slow


def _config(tmp_path, steps: int) -> dict:
    return {
        "name": "avg", "output_dir": str(tmp_path), "base": "local", "seed": 3, "steps": steps,
        "lora": {"r": 2, "alpha": 4, "target_modules": ["q_proj"]},
        "games": [{"id": "kuhn_poker", "options": {"hands": 1}}],
        "rollout": {"mode": "choice", "engine": "hf", "obs": "state", "temperature": 5.0, "groups_per_step": 2, "group_size": 2,
                    "in_flight": 4, "max_new_tokens": 4},
        "rewards": {"terms": [{"kind": "outcome", "mode": "score"}]},
        "algorithm": {"epochs": 1, "minibatch_size": 16, "micro_batch_size": 16, "learning_rate": 5e-2, "entropy_coef": 0.05,
                      "average_from": 0.5},
        "checkpoint": {"every": 2, "register_in_league": False},
        "logging": {"wandb": False},
    }


def test_the_average_is_the_mean_of_the_iterates_and_survives_a_resume(tmp_path):
    trainer = Trainer(parse_config(_config(tmp_path, 4), "test"))
    trainer.setup()
    iterates = []
    try:
        for _ in range(3):
            report = asyncio.run(trainer.train_step())
            iterates.append({k: p.detach().clone() for k, p in trainer.learner.params.items()})
        # average_from 0.5 of 4 steps: steps 2, 3 and 4 are averaged
        assert trainer.learner.averaged_iterates == 2 and report.metrics["train/averaged_iterates"] == 2
        for key, value in trainer.learner.average.items():  # float32 mean of two: exact to rounding
            torch.testing.assert_close(value, (iterates[1][key] + iterates[2][key]) / 2, atol=1e-7, rtol=1e-6)
        [(step, folder)] = list_checkpoints(tmp_path / "avg")
        assert step == 2 and (folder / AVERAGE_DIR / "adapter_model.safetensors").is_file()
    finally:
        trainer.close()
    resumed = Trainer(parse_config(_config(tmp_path, 4), "test"), resume=True)
    resumed.setup()
    try:
        assert resumed.step == 2 and resumed.learner.averaged_iterates == 1  # step 2 was the first averaged
        for key, value in resumed.learner.average.items():
            torch.testing.assert_close(value, iterates[1][key], atol=1e-7, rtol=0)
    finally:
        resumed.close()
