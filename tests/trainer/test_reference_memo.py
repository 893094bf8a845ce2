"""The base model's log-probs of an action are computed once per run (trainer.learner's
`_reference_logps`): the base never changes, so the KL term's reference pass is free for every
decision seen before, and a remembered value is the one a fresh pass gives."""

from __future__ import annotations

import random

import pytest
import torch

from arena.llm.engines import open_engine
from arena.llm.bounded_memo import BoundedMemo
from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, Sample, write_initial_adapter

CHAT = [{"role": "system", "content": "You play Kuhn poker."}, {"role": "user", "content": "Your card: K. Check or bet?"}]


def _samples(engine, chat: list[dict] = CHAT) -> list[Sample]:
    prompt = engine.encode(chat)
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


@pytest.mark.slow
def test_a_steps_new_decisions_share_scoring_forwards_and_outlive_a_small_memo(tmp_path, monkeypatch):
    engine = open_engine("local", "hf")
    write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), tmp_path / "adapter", seed=2)
    learner = Learner(engine, tmp_path / "adapter", AlgorithmSettings(micro_batch_size=1, minibatch_size=2, epochs=1, kl_coef=0.1),
                      temperature=1.0, max_new_tokens=4)
    learner.base_logps = BoundedMemo(entries=1)  # fewer entries than the step's decisions
    forwards: list[int] = []
    original = learner._action_logps
    monkeypatch.setattr(learner, "_action_logps", lambda chunk, *a, **k: forwards.append(len(chunk)) or original(chunk, *a, **k))
    # rules long enough for the CPU's layout to share them as one prompt prefix (MIN_SHARED_PREFIX)
    rules = [{"role": "system", "content": "You play Kuhn poker. " + "Each player antes 1 chip and gets one card of J, Q, K. " * 4},
             CHAT[1]]
    samples = _samples(engine, rules)
    learner.prepare(samples, need_ref=True)
    # micro-batches of 1 for the update, but no gradients here: the behaviour pass and the base's
    # pass each take both decisions in one forward
    assert forwards == [2, 2]
    with torch.no_grad(), learner.model.disable_adapter():
        fresh = [original([sample])[0][0, :1].cpu() for sample in _samples(engine, rules)]
    for sample, expected in zip(samples, fresh):  # every sample got its own, though the memo kept one
        assert sample.ref_logps is not None
        assert torch.allclose(sample.ref_logps, expected, atol=1e-5)
