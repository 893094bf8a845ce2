"""algorithm.micro_batch_memory_gb: wide rows share a micro-batch with fewer others, so a game
with long prompts cannot take the learner past the machine's memory, and the update is the same
however the minibatch is cut."""

import random

import pytest
import torch

from trainer.config import AlgorithmSettings, LoraSettings, parse_config
from trainer.learner import LOGIT_BYTES, NO_GRAD_ROW_SHARE, SCORING_MICRO_BATCHES, Learner, Sample, micro_batches, row_tokens, write_initial_adapter
from trainer.micro_batch_memory import RowMemory


def _text(prefix: list[int], own: int, reply: int = 4) -> Sample:
    return Sample(prefix + list(range(1000, 1000 + own)), list(range(2000, 2000 + reply)), 1.0)


def test_wide_rows_get_fewer_companions_and_every_sample_runs_once():
    seat = list(range(100, 140))  # one seat's 40-token system prompt
    samples = [_text(seat, own) for own in (10, 300, 20, 15, 500, 12, 900, 30)]

    def rows_fitting(width: int) -> int:  # as RowMemory: rows x width squared within a budget
        return max(1, 1_500_000 // (width * width))

    chunks = micro_batches(samples, 16, rows_fitting)
    assert sorted(id(x) for c in chunks for x in c) == sorted(id(x) for x in samples)
    for chunk in chunks:
        assert len(chunk) <= rows_fitting(max(row_tokens(x) for x in chunk))
    assert max(len(c) for c in chunks) > 1  # short rows still share a micro-batch
    assert len(chunks) > 1
    # without the bound only the row count cuts: one chunk of all eight
    assert [len(c) for c in micro_batches(samples, 16)] == [8]
    # a row too wide for any company runs alone instead of being refused
    assert sorted(len(c) for c in micro_batches([_text(seat, 2000), _text(seat, 5)], 16, rows_fitting)) == [1, 1]


def test_forwards_without_gradients_take_more_rows_within_the_same_cap():
    smollm2 = RowMemory(layers=30, heads=9, units=576 + 1536)
    samples = [_text(list(range(100, 140)), 956) for _ in range(10)]  # rows of 1,000 tokens: ~1.46 GB each in an update
    assert {row_tokens(x) for x in samples} == {1000}
    learner = object.__new__(Learner)  # only what scoring_batches reads
    learner.settings = AlgorithmSettings(micro_batch_size=2, minibatch_size=16, micro_batch_memory_gb=1.5, share_prefix=True)
    learner.row_memory, learner.max_new_tokens, learner.vocab_size = smollm2, 4, 49152
    assert [len(c) for c in micro_batches(samples, 2, lambda width: smollm2.rows_fitting(width, 1.5))] == [1] * 10
    # a scoring row: a quarter of the update's estimate and its reply's logits (5 positions)
    row = NO_GRAD_ROW_SHARE * smollm2.bytes(1000) + LOGIT_BYTES * 5 * 49152
    assert learner.scoring_row_bytes(1000) == pytest.approx(row)
    fitting = int(1.5e9 // row)
    assert fitting == 4  # the same 1.5 GB that holds one row of an update
    assert [len(c) for c in Learner.scoring_batches(learner, samples)] == [4, 4, 2]
    # uncapped: SCORING_MICRO_BATCHES micro-batches' rows in one forward
    learner.settings = learner.settings.model_copy(update={"micro_batch_memory_gb": None})
    size = 2 * SCORING_MICRO_BATCHES
    assert [len(c) for c in Learner.scoring_batches(learner, samples)] == [size, 10 - size]
    # long replies weigh their logits: 256 reply positions of a 500-token row
    learner.max_new_tokens = 256
    assert learner.scoring_row_bytes(500) > NO_GRAD_ROW_SHARE * smollm2.bytes(500) + 1e8


def test_the_memory_estimate_grows_with_width_squared_and_matches_the_measured_row():
    smollm2 = RowMemory(layers=30, heads=9, units=576 + 1536)
    # measured: ~1.4 GB a row of 1,016 tokens on the shared-prefix path (trainer/micro_batch_memory.py)
    assert 1.2e9 < smollm2.bytes(1016) < 1.7e9
    assert smollm2.bytes(2000) / smollm2.bytes(1000) > 3.5
    assert smollm2.rows_fitting(1000, 6.0) == 4  # the 16 rows that ran out of 24 GB are cut to 4
    assert smollm2.rows_fitting(100_000, 6.0) == 1
    class Shape:  # a Hugging Face config's fields
        num_hidden_layers, num_attention_heads, hidden_size, intermediate_size = 30, 9, 576, 1536
    assert RowMemory.of(Shape()) == smollm2


def test_a_choice_row_counts_its_prompt_and_every_legal_move():
    sample = Sample([1] * 50, [5, 0], 0.0, option_ids=[[4, 0], [5, 0], [6, 7, 0]], chosen=1)
    assert row_tokens(sample) == 50 + (2 + 1) + (2 + 1) + (3 + 1)
    assert row_tokens(Sample([1] * 50, [5, 0], 0.0)) == 52


def test_the_bound_is_a_setting_on_by_default():
    config = parse_config({"name": "x", "games": [{"id": "tictactoe"}]}, "test")
    assert config.algorithm.micro_batch_memory_gb == 6.0
    off = {"name": "x", "games": [{"id": "tictactoe"}], "algorithm": {"micro_batch_memory_gb": None}}
    assert parse_config(off, "test").algorithm.micro_batch_memory_gb is None
    with pytest.raises(ValueError, match="micro_batch_memory_gb"):
        parse_config({"name": "x", "games": [{"id": "tictactoe"}], "algorithm": {"micro_batch_memory_gb": 0}}, "test")


@pytest.mark.slow
def test_an_update_cut_by_memory_equals_the_update_cut_by_rows(tmp_path):
    from arena.llm.engines import open_engine

    engine = open_engine("local", "hf")
    rng = random.Random(0)
    seat = [rng.randrange(1000, 40000) for _ in range(40)]

    def turns() -> list[Sample]:
        rows = random.Random(1)
        return [Sample(seat + [rows.randrange(1000, 40000) for _ in range(own)], [rows.randrange(1000, 40000) for _ in range(4)],
                       rows.choice([-1.0, 0.5, 1.5])) for own in (6, 90, 12, 150, 8, 40)]

    updated = []
    for budget in (None, 0.004):  # 4 MB: the 40-token prompts' rows split into several micro-batches
        folder = tmp_path / f"budget-{budget}"
        write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), folder, seed=5)
        settings = AlgorithmSettings(epochs=1, minibatch_size=8, micro_batch_size=8, micro_batch_memory_gb=budget,
                                     learning_rate=1e-2, loss_norm="token", kl_coef=0.0)
        learner = Learner(engine, folder, settings, temperature=1.0, max_new_tokens=4)
        samples = turns()
        assert (len(micro_batches(samples, 8, learner.rows_fitting)) > 1) is (budget is not None)  # the budget really cuts
        learner.update(samples, random.Random(0))
        updated.append({k: (p.detach().clone(), p.grad.clone()) for k, p in learner.params.items()})
        # the cap is read from the settings, so a run (or bench.learner) that changes it gets it
        learner.settings = learner.settings.model_copy(update={"micro_batch_memory_gb": None if budget else 0.004})
        assert (len(micro_batches(samples, 8, learner.rows_fitting)) > 1) is (budget is None)
    for key, (weights, grad) in updated[0].items():
        # The same float32 products summed in another order (and rows padded to another width):
        # each gradient element sums ~10^4 products, rounding ~sqrt(n) * eps32 of the largest
        # terms, so elements are held to 1e-4 of the tensor's scale.
        scale = float(grad.abs().max())
        torch.testing.assert_close(updated[1][key][1], grad, atol=1e-4 * scale, rtol=1e-3)
        # Adam's first step moves each weight by lr x sign(gradient) (m / sqrt(v) = g / |g|), so
        # wherever the gradient stands clear of that rounding the weights agree to float32; where
        # it is rounding, its sign (and the step) may go either way.
        clear = grad.abs() > 1e-3 * scale
        torch.testing.assert_close(updated[1][key][0][clear], weights[clear], atol=1e-6, rtol=0)
    assert any(w.abs().sum() > 0 for k, (w, _) in updated[0].items() if "lora_B" in k)
