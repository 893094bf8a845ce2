"""The learner takes the sampler's log-probs as the behaviour policy's where the sampler was the
learner's own engine, and skips the reference pass when the loss has no KL term.

The bound: rollouts on the hf engine sample with the same weights and the same code the learner
scores with, so their log-probs differ from a recompute only by float32 rounding (generation
runs the prompt through a KV cache, batched; the learner runs prompt and reply in one forward):
1e-4 nats per token holds with room over a 49k-entry log-softmax."""

import asyncio
import random

import pytest
import torch

from arena.llm.engines import open_engine
from arena.match import play_match
from games.registry import make_game
from trainer.config import AlgorithmSettings, LoraSettings, RolloutSettings
from trainer.learner import Learner, write_initial_adapter
from trainer.rollouts import learner_temperature, training_policy, turn_sample

pytestmark = pytest.mark.slow

BOUND = 1e-4


def _learner(tmp_path, rollout: RolloutSettings, **settings) -> Learner:
    adapter = tmp_path / "live"
    write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), adapter, seed=4)
    engine = open_engine("local", "hf")
    algorithm = AlgorithmSettings(epochs=1, minibatch_size=8, micro_batch_size=2, learning_rate=1e-3, **settings)
    learner = Learner(engine, adapter, algorithm, temperature=learner_temperature(rollout), max_new_tokens=rollout.max_new_tokens)
    torch.manual_seed(1)
    with torch.no_grad():  # a non-zero adapter, so sampling and scoring really run through it
        for p in learner.params.values():
            p.add_(torch.randn_like(p) * 0.01)
    return learner


def _samples(learner: Learner, rollout: RolloutSettings, game: str, **options) -> list:
    policy = training_policy("local", learner.adapter_key, rollout)

    async def play():
        return await asyncio.gather(*(play_match(make_game(game, 2, **options), [policy, policy], seed) for seed in range(3)))

    turns = [t for record in asyncio.run(play()) for t in record.turns if t.meta.get("completion_ids")]
    samples = [turn_sample(t.meta, 1.0, learner_engine=True, top_p=rollout.top_p) for t in turns]
    assert samples and all(s.sampled_by_learner and s.sampler_logps is not None for s in samples)
    return samples


@pytest.mark.parametrize("mode", ["text", "choice"])
def test_the_hf_samplers_log_probs_are_the_learners_within_the_bound(tmp_path, mode):
    rollout = RolloutSettings(mode=mode, obs="state", temperature=2.0 if mode == "choice" else 1.0, max_new_tokens=6)
    learner = _learner(tmp_path, rollout)
    samples = _samples(learner, rollout, "kuhn_poker" if mode == "choice" else "tictactoe", **({"hands": 1} if mode == "choice" else {}))
    worst = 0.0
    with torch.no_grad():
        for sample in samples:
            logps, _, _ = learner._action_logps([sample])
            recomputed = logps[0, : sample.action_length].cpu()
            worst = max(worst, float((recomputed - torch.tensor(sample.sampler_logps)).abs().max()))
    assert worst < BOUND, f"sampler and learner disagree by {worst:.2e} nats"


def test_prepare_reuses_them_checks_a_few_rows_and_runs_no_reference_at_kl_0(tmp_path, monkeypatch):
    rollout = RolloutSettings(mode="text", obs="state", temperature=1.0, max_new_tokens=6)
    learner = _learner(tmp_path, rollout)
    samples = _samples(learner, rollout, "tictactoe")
    forwards: list[int] = []
    original = learner._action_logps
    monkeypatch.setattr(learner, "_action_logps", lambda chunk, *a, **k: forwards.append(len(chunk)) or original(chunk, *a, **k))
    mismatch = learner.prepare(samples, need_ref=False)
    assert forwards == [2], "one check forward of a micro-batch's rows (2), then the sampler's own log-probs"
    assert 0 <= mismatch["mismatch/logp_abs_max"] < BOUND and mismatch["mismatch/tokens"] >= 2
    reused = [s for s in samples if torch.equal(s.old_logps, torch.tensor(s.sampler_logps, dtype=torch.float32))]
    assert len(reused) >= len(samples) - 2 and all(s.ref_logps is None for s in samples)
    def no_base_pass():
        raise AssertionError("kl_coef is 0: the base model must not run")

    monkeypatch.setattr(learner.model, "disable_adapter", no_base_pass)
    stats = learner.update(samples, random.Random(0))
    assert "train/kl" not in stats and stats["train/optimizer_steps"] >= 1


def test_without_reuse_every_turn_is_recomputed(tmp_path, monkeypatch):
    rollout = RolloutSettings(mode="text", obs="state", temperature=1.0, max_new_tokens=6)
    learner = _learner(tmp_path, rollout, reuse_sampler_logps=False, kl_coef=0.1)
    samples = _samples(learner, rollout, "tictactoe")
    forwards: list[int] = []
    original = learner._action_logps
    monkeypatch.setattr(learner, "_action_logps", lambda chunk, *a, **k: forwards.append(len(chunk)) or original(chunk, *a, **k))
    learner.prepare(samples, need_ref=True)
    assert sum(forwards) == 2 * len(samples)  # every turn: the behaviour pass and the base's
    assert all(s.ref_logps is not None for s in samples)
