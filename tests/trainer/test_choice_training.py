"""Training in choice mode: the drawn move's tokens are the action, their log-probs under the
engine's scoring are the behaviour log-probs, and the learner must recompute exactly those."""

import asyncio
import random

import pytest
import torch

from arena.llm.engine import get_engine
from arena.match import play_match
from games.registry import make_game
from trainer.config import AlgorithmSettings, LoraSettings, RolloutSettings
from trainer.learner import Learner, Sample, write_initial_adapter
from trainer.rollouts import TrainingPolicy, learner_temperature

pytestmark = pytest.mark.slow


def test_learner_reproduces_the_sampling_logprobs_and_the_update_moves_the_choice(tmp_path):
    rollout = RolloutSettings(mode="choice", obs="state", temperature=1.0)
    adapter = tmp_path / "live"
    write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), adapter, seed=2)
    engine = get_engine("local")
    settings = AlgorithmSettings(epochs=1, minibatch_size=4, micro_batch_size=4, learning_rate=1e-3)
    learner = Learner(engine, adapter, settings, temperature=learner_temperature(rollout), max_new_tokens=rollout.max_new_tokens)
    torch.manual_seed(0)
    with torch.no_grad():  # a non-zero adapter, so the scoring really runs through it
        for p in learner.params.values():
            p.add_(torch.randn_like(p) * 0.01)
    policy = TrainingPolicy("local", str(adapter), rollout)

    async def rollouts():
        return await asyncio.gather(*(play_match(make_game("kuhn_poker", 2, hands=1), [policy, policy], seed) for seed in range(2)))

    records = asyncio.run(rollouts())
    turns = [t for r in records for t in r.turns]
    assert turns and all(t.valid and t.meta["parse"] == "choice" for t in turns)
    samples = [Sample(t.meta["prompt_ids"], t.meta["completion_ids"], advantage=0.0, meta={"turn": t}) for t in turns]
    for sample in samples:  # the action is the move's own tokens plus end-of-turn
        turn = sample.meta["turn"]
        assert engine.tokenizer.decode(sample.completion_ids, skip_special_tokens=True) == turn.action
        assert sample.completion_ids[-1] in engine._end_ids
    learner.prepare(samples, need_ref=False)
    for sample in samples:
        behaviour = torch.tensor(sample.meta["turn"].meta["completion_logprobs"])
        torch.testing.assert_close(sample.old_logps, behaviour, atol=1e-4, rtol=0)

    # One positive-advantage turn, trained: the drawn move's log-prob as the whole reply rises.
    # (That is what the clipped update optimises; the choice distribution renormalises it over
    # the legal moves: docs/training.md, "Strategy vs legality".)
    target = samples[0]
    before = float(learner._forward_logps([target])[0].sum())
    target.advantage = 1.0
    stats = learner.update([target], random.Random(0))
    after = float(learner._forward_logps([target])[0].sum())
    assert stats["train/optimizer_steps"] == 1
    assert after > before, (before, after)
