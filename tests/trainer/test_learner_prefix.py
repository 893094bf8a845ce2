"""The learner runs a batch's shared system prompt once and repeats its KV cache for every row.
That must be the same function of the same weights: same log-probs, same gradients, as the plain
left-padded batch (with LoRA weights made non-zero first, so the adapter really takes part)."""

import pytest
import torch

import arena.llm.engines.scoring as scoring
from tests.trainer.lora_learner import learner_with_active_lora
from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, Sample, write_initial_adapter

pytestmark = pytest.mark.slow

SYSTEM = "You play Tic-Tac-Toe as X. Cells are numbered 0-8, left to right, top to bottom. " * 4


def _samples(tokenizer) -> list[Sample]:
    samples = []
    for i, (board, reply) in enumerate([("X at 4.", " [0]"), ("O at 1, X at 4, free 0 2 3.", " I take [2] now"), ("Empty board.", "[4]")]):
        chat = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Turn {i}: {board} Your move?"}]
        prompt = list(tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
        samples.append(Sample(prompt, tokenizer(reply)["input_ids"] + [tokenizer.eos_token_id], advantage=1.0))
    return samples


def _logps_and_grads(learner: Learner, samples: list[Sample]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    learner.optimizer.zero_grad(set_to_none=True)
    logps, mask, _ = learner._forward_logps(samples)
    (logps * mask).sum().backward()
    return logps.detach() * mask, {k: p.grad.detach().clone() for k, p in learner.params.items()}


def test_shared_prefix_gives_the_same_logps_and_gradients(tmp_path, monkeypatch):
    learner = learner_with_active_lora(tmp_path / "adapter")
    engine = learner.engine
    samples = _samples(engine.tokenizer)
    assert scoring.shared_prefix_length([s.prompt_ids for s in samples]) >= scoring.MIN_SHARED_PREFIX

    calls = []
    original = engine.model.forward
    monkeypatch.setattr(engine.model, "forward", lambda *a, **k: calls.append(k["input_ids"].shape) or original(*a, **k))
    shared_logps, shared_grads = _logps_and_grads(learner, samples)
    assert calls[0][0] == 1 and len(calls) == 2, "the prefix should run once, then every row's own tokens"
    monkeypatch.setattr(scoring, "MIN_SHARED_PREFIX", 10**9)  # the plain left-padded batch (sharable_prefix reads it)
    plain_logps, plain_grads = _logps_and_grads(learner, samples)

    torch.testing.assert_close(shared_logps, plain_logps, atol=2e-4, rtol=1e-4)
    for key in plain_grads:
        # the two paths sum the same float32 products in another order: elements near 0 are held
        # to 1e-4 of the tensor's own scale (sqrt(n) * eps32 over ~10^4 products is ~1e-5 of it)
        scale = float(plain_grads[key].abs().max())
        torch.testing.assert_close(shared_grads[key], plain_grads[key], atol=1e-4 * scale, rtol=2e-3)
    assert any(g.abs().sum() > 0 for g in plain_grads.values())


def test_micro_batches_hold_rows_that_share_a_system_prompt(tmp_path, monkeypatch):
    """Two seats' prompts differ in the system prompt's first line: a shuffled minibatch shared
    nothing and paid for the rules in every row. Rows are grouped by prompt before they are cut
    into micro-batches, in the update and in the log-probs taken before it."""
    from arena.llm.engines import open_engine

    write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), tmp_path / "adapter", seed=3)
    engine = open_engine("local", "hf")
    learner = Learner(engine, tmp_path / "adapter", AlgorithmSettings(micro_batch_size=2, minibatch_size=4, epochs=1, kl_coef=0.1), temperature=1.0, max_new_tokens=8)
    tokenizer = engine.tokenizer
    samples = []
    for seat in (0, 1, 0, 1):  # interleaved, as a shuffle leaves them
        chat = [{"role": "system", "content": f"You are player {seat}. " + SYSTEM}, {"role": "user", "content": f"Seat {seat}, turn {len(samples)}."}]
        prompt = list(tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])
        samples.append(Sample(prompt, tokenizer(" [4]")["input_ids"] + [tokenizer.eos_token_id], advantage=1.0 - seat))
    chunks = []
    original = learner._forward_logps
    monkeypatch.setattr(learner, "_forward_logps", lambda micro, **k: chunks.append(list(micro)) or original(micro, **k))
    learner.update(samples, __import__("random").Random(0))
    assert len(chunks) == 6  # before the update: old and base log-probs, two micro-batches each; then two in it
    for chunk in chunks:
        assert scoring.shared_prefix_length([s.prompt_ids for s in chunk]) >= scoring.MIN_SHARED_PREFIX
