"""bench.learner's bare reference costs what the learner computes: the same tokens, the same
log-probs. A reference that scored fewer tokens, or other ones, would flatter `learner_over_bare`."""

import argparse

import pytest
import torch

from bench.learner import (CONFIG_CAP, DEFAULT_MEMORY_GB, arguments, bare_logp_sum, bare_micro_batches, bare_rows,
                           memory_cap, scored_tokens)
from tests.trainer.lora_learner import learner_with_active_lora
from trainer.learner import Sample, micro_batches, row_tokens
from trainer.micro_batch_memory import RowMemory

pytestmark = pytest.mark.slow


def _prompt(tokenizer, text: str) -> list[int]:
    chat = [{"role": "system", "content": "You play Tic-Tac-Toe."}, {"role": "user", "content": text}]
    return list(tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"])


def test_a_choice_samples_bare_row_holds_the_prompt_and_every_legal_move():
    options = [[11, 2], [12, 2], [13, 14, 2]]
    sample = Sample([1, 5, 6, 7], [12, 2], advantage=1.0, option_ids=options, chosen=1)
    [(row, scored)] = bare_rows(sample)
    assert row == [1, 5, 6, 7, 11, 2, 12, 2, 13, 14, 2] and scored == 7
    assert scored_tokens(sample) == len(row)


def test_the_bare_forward_scores_a_reply_as_the_learner_does(tmp_path):
    """Text replies at temperature 1: the bare sum of reply log-probs equals the learner's (prefix
    sharing and all), and so does its gradient. float32 over a 49k vocabulary and ~10^2 tokens:
    the two paths sum in another order, so 1e-4 of the value's scale."""
    learner = learner_with_active_lora(tmp_path / "adapter")
    engine = learner.engine
    tokenizer = engine.tokenizer
    samples = [Sample(_prompt(tokenizer, board), tokenizer(reply)["input_ids"] + [tokenizer.eos_token_id], advantage=1.0)
               for board, reply in [("X at 4. Your move?", " [0]"), ("Empty board. Your move?", " I take [2]")]]

    learner.optimizer.zero_grad(set_to_none=True)
    logps, mask, _ = learner._forward_logps(samples)
    ours = (logps * mask).sum()
    ours.backward()
    our_grads = {k: p.grad.detach().clone() for k, p in learner.params.items()}

    learner.optimizer.zero_grad(set_to_none=True)
    bare = bare_logp_sum(learner.model, tokenizer.pad_token_id, [row for s in samples for row in bare_rows(s)])
    bare.backward()
    bare, ours = float(bare.detach()), float(ours.detach())
    assert bare == pytest.approx(ours, abs=1e-4 * max(1.0, abs(ours)))
    for key, grad in our_grads.items():
        scale = float(grad.abs().max())
        torch.testing.assert_close(learner.params[key].grad, grad, atol=1e-4 * scale, rtol=2e-3)
    assert any(float(g.abs().sum()) > 0 for g in our_grads.values())
    learner.optimizer.zero_grad(set_to_none=True)


def test_the_profile_names_the_learners_phases_and_leaves_it_as_it_was(tmp_path):
    """`--profile`: one update under torch.profiler, its phases as named ranges; the learner's
    methods and torch's backward are the originals again afterwards."""
    from bench.learner import dispatches, profile_update

    learner = learner_with_active_lora(tmp_path / "adapter")
    tokenizer = learner.engine.tokenizer
    samples = [Sample(_prompt(tokenizer, board), tokenizer(reply)["input_ids"] + [tokenizer.eos_token_id], advantage=advantage)
               for board, reply, advantage in [("X at 4. Your move?", " [0]", 1.0), ("Empty board. Your move?", " [2]", -1.0)]]
    backward = torch.Tensor.backward
    profile_update(learner, samples, tmp_path / "ops.txt")
    table = (tmp_path / "ops.txt").read_text()
    for phase in ("learner.prepare", "learner.step", "learner.forward_logps", "learner.backward", "learner.optimizer_step"):
        assert phase in table, phase
    assert torch.Tensor.backward is backward
    assert not {"prepare", "_step", "_run"} & set(vars(learner)), "the wrappers stay on the instance"
    assert dispatches(lambda: torch.ones(3) + 1) == 2  # ones, add


def test_the_memory_cap_option_takes_gigabytes_or_none_and_refuses_the_rest():
    assert arguments([]).micro_batch_memory_gb is CONFIG_CAP  # left out: the config's
    assert arguments(["--micro-batch-memory-gb", "none", "--game", "leduc_holdem"]).micro_batch_memory_gb is None
    assert memory_cap("6") == 6.0 and memory_cap("0.5") == 0.5 and memory_cap("none") is None
    for bad, reason in (("0", "above 0"), ("-1", "above 0"), ("lots", "number of GB"), ("nan", "above 0")):
        with pytest.raises(argparse.ArgumentTypeError, match=reason):
            memory_cap(bad)


def test_the_bare_cut_keeps_the_default_cap_where_the_learners_is_larger_or_lifted():
    """Bare torch keeps every row's whole attention: rows the learner fits 17 to a forward under a
    12 GB cap took it past 24 GB (Leduc, 2026-11-29). Its forwards stay within the default cap,
    and are the learner's own where the learner's cap is smaller."""
    smollm2 = RowMemory(layers=30, heads=9, units=576 + 1536)
    options = [[11, 2], [12, 2], [13, 14, 2]]
    samples = [Sample(list(range(1, 640 + k)), [12, 2], advantage=1.0, option_ids=options, chosen=1) for k in range(40)]
    widest = max(row_tokens(x) for x in samples)
    fits_default = smollm2.rows_fitting(widest, DEFAULT_MEMORY_GB)
    assert 1 < fits_default < smollm2.rows_fitting(widest, 12.0)  # the case that was killed: 12 GB lets in more rows
    for learner_cap in (12.0, None):
        chunks = bare_micro_batches(samples, 32, smollm2, learner_cap, by_prefix=True)
        assert sorted(id(x) for c in chunks for x in c) == sorted(id(x) for x in samples)  # every row, once
        assert all(len(c) <= smollm2.rows_fitting(max(row_tokens(x) for x in c), DEFAULT_MEMORY_GB) for c in chunks)
        assert max(len(c) for c in chunks) >= fits_default  # full within the cap, not one row a forward
    smaller = bare_micro_batches(samples, 32, smollm2, 2.0, by_prefix=True)
    assert smaller == micro_batches(samples, 32, lambda width: smollm2.rows_fitting(width, 2.0), by_prefix=True)
    assert max(len(c) for c in smaller) < fits_default
