"""The base model's log-probs of an action are computed once per run (trainer.learner's
`_reference_logps`): the base never changes, so the KL term's reference pass is free for every
decision seen before, and a remembered value is the one a fresh pass gives."""

from __future__ import annotations

import random

import pytest
import torch

from arena.llm.engines import open_engine
from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, Sample, write_initial_adapter

CHAT = [{"role": "system", "content": "You play Kuhn poker."}, {"role": "user", "content": "Your card: K. Check or bet?"}]


def _samples(engine) -> list[Sample]:
    prompt = engine.encode(CHAT)
    options = engine.option_ids(["check", "bet"])
    return [Sample(prompt, options[0], advantage=-1.0, option_ids=options, chosen=0, choice_temperature=5.0),
            Sample(prompt, options[1], advantage=1.0, option_ids=options, chosen=1, choice_temperature=5.0)]


@pytest.mark.slow
def test_the_base_pass_runs_once_per_decision_and_gives_what_a_fresh_pass_gives(tmp_path, monkeypatch):
    engine = open_engine("local", "hf")
    write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), tmp_path / "adapter", seed=2)
    learner = Learner(engine, tmp_path / "adapter", AlgorithmSettings(micro_batch_size=2, minibatch_size=2, epochs=1, kl_coef=0.1,
                                                                       learning_rate=1e-2), temperature=1.0, max_new_tokens=4)
    computed = []
    put = learner.base_logps.put
    monkeypatch.setattr(learner.base_logps, "put", lambda key, value: computed.append(key) or put(key, value))
    first = learner.update(_samples(engine), random.Random(0))
    second = learner.update(_samples(engine), random.Random(1))
    assert len(computed) == 2  # the second update found both decisions remembered
    assert first["train/kl"] >= 0 and second["train/kl"] > 0  # the adapter moved away from the base
    remembered = _samples(engine)
    learner._reference_logps(remembered)
    with torch.no_grad(), learner.model.disable_adapter():
        fresh, _, _ = learner._action_logps(_samples(engine))
    for row, sample in enumerate(remembered):  # float32 log-softmax over two moves of a 49k-vocab model
        assert torch.allclose(sample.ref_logps, fresh[row, :1].cpu(), atol=1e-5)

