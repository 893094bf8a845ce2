"""The local engine: batching really batches, LoRA adapters stay isolated, constrained choice, cache reuse."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from arena.llm import model as model_mod
from arena.llm.engines import SamplingParams, open_engine

MESSAGES = [
    {"role": "system", "content": "You play Tic-Tac-Toe as X."},
    {"role": "user", "content": "Board:\n1|2|3\n4|5|6\n7|8|9\nPick a free cell. Answer like [5]."},
]
GREEDY = SamplingParams(temperature=0.0, max_new_tokens=6)


@pytest.fixture(scope="module")
def engine():
    return open_engine("local", "hf")


def test_cache_is_reused_without_converting(monkeypatch):
    first = model_mod.local_model_dir(show_progress=False)  # converts only on a fresh machine
    marker = first / model_mod.CONVERTED_MARKER
    stamp = marker.stat().st_mtime_ns

    def no_conversion(*args, **kwargs):
        raise AssertionError("a cached model must not be converted again")

    monkeypatch.setattr(model_mod, "_convert_gguf", no_conversion)
    assert model_mod.local_model_dir(show_progress=False) == first
    assert marker.stat().st_mtime_ns == stamp


def test_killed_conversion_leaves_no_cache(tmp_path, monkeypatch):
    import transformers

    monkeypatch.setenv("ARENA_CACHE_DIR", str(tmp_path))

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # what Ctrl-C mid-conversion looks like

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", killed)
    with pytest.raises(KeyboardInterrupt):
        model_mod.local_model_dir(show_progress=False)
    models = tmp_path / "models"
    assert list(models.iterdir()) == []  # neither a target folder nor a partial one


@pytest.mark.slow
async def test_concurrent_requests_share_one_generate(engine):
    before = engine.stats.generate_calls
    replies = await asyncio.gather(*[engine.chat(MESSAGES, SamplingParams(max_new_tokens=4, seed=i)) for i in range(6)])
    assert engine.stats.generate_calls - before < 6
    assert engine.stats.largest_batch >= 2
    for reply in replies:
        assert reply.completion_tokens <= 4 and reply.prompt_tokens == engine.count_tokens(MESSAGES)
        assert reply.finish_reason in {"stop", "length"}


@pytest.mark.slow
async def test_seeded_sampling_reproduces_and_rows_keep_their_budgets(engine):
    a, b, short = await asyncio.gather(
        engine.chat(MESSAGES, SamplingParams(temperature=1.0, max_new_tokens=8, seed=7)),
        engine.chat(MESSAGES, SamplingParams(temperature=1.0, max_new_tokens=8, seed=7)),
        engine.chat(MESSAGES, SamplingParams(temperature=1.0, max_new_tokens=2, seed=8)),
    )
    assert a.text == b.text
    assert short.completion_tokens <= 2


@pytest.mark.slow
async def test_choose_returns_one_of_the_options(engine):
    options = [str(i) for i in range(1, 10)]
    before = engine.stats.choose_forwards
    results = await asyncio.gather(*[engine.choose(MESSAGES, options) for _ in range(3)], engine.choose(MESSAGES, ["[5]"]))
    for choice, generation in results[:3]:
        assert choice in options and generation.text == choice
    assert results[3][0] == "[5]"
    assert engine.stats.choose_forwards - before == 2  # one prefill + one scoring pass for all four
    with pytest.raises(ValueError):
        await engine.choose(MESSAGES, [])


@pytest.mark.slow
async def test_choose_scores_the_same_in_the_cuda_layout_in_one_forward(engine, monkeypatch):
    """Where no prefix is shared (CUDA's layout, `shares_prefix_on`), both seats' prompts and all
    their moves run in one forward, and every move scores what the CPU's shared-prefix layout
    gives it. float32 log-softmax over a 49k vocabulary, the prompt through a KV cache or under a
    4D mask: 1e-4 holds (tests/llm/test_choice_scoring.py)."""
    from arena.llm.engines.choice_memo import ChoiceMemo

    rules = "Tic-Tac-Toe. Three marks in a row win; players alternate; a full board is a draw. " * 3
    requests = [
        ([{"role": "system", "content": f"You are {seat}. {rules}"}, {"role": "user", "content": f"Free cells: {cells}. Pick one."}], cells)
        for seat, cells in (("X", ["1", "5", "9"]), ("X", ["2", "3", "7", "8"]), ("O", ["4", "6"]))
    ]

    async def scored() -> tuple[list[list[float]], int]:
        monkeypatch.setattr(engine, "_choice_memo", ChoiceMemo())  # score again, not from the memo
        before = engine.stats.choose_forwards
        results = await asyncio.gather(*[engine.choose(messages, options) for messages, options in requests])
        return [generation.option_logprobs for _, generation in results], engine.stats.choose_forwards - before

    assert engine.share_prefix  # the CPU's rule
    shared, shared_forwards = await scored()
    monkeypatch.setattr(engine, "share_prefix", False)
    joint, joint_forwards = await scored()
    assert (shared_forwards, joint_forwards) == (3, 1)  # X's prefix, X's moves, O alone in one; then one for all
    for a, b in zip(shared, joint):
        assert a == pytest.approx(b, abs=1e-4)


def _make_adapter(base_dir: str, out: Path, seed: int) -> str:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(base_dir)
    config = LoraConfig(r=4, lora_alpha=32, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    get_peft_model(base, config).save_pretrained(out)
    return str(out)


@pytest.mark.slow
async def test_lora_adapters_are_isolated_in_one_batch(engine, tmp_path):
    base_dir = engine.loaded.source
    first = _make_adapter(base_dir, tmp_path / "a", seed=1)
    second = _make_adapter(base_dir, tmp_path / "b", seed=2)
    engine.load_adapter(first)
    before = engine.stats.generate_calls
    base_out, a_out, b_out = await asyncio.gather(
        engine.chat(MESSAGES, GREEDY), engine.chat(MESSAGES, GREEDY, adapter=first), engine.chat(MESSAGES, GREEDY, adapter=second)
    )
    assert engine.stats.generate_calls - before <= 2  # the second adapter loads lazily, then all batch together
    assert len({base_out.text, a_out.text, b_out.text}) == 3
    a_alone = await engine.chat(MESSAGES, GREEDY, adapter=first)
    base_alone = await engine.chat(MESSAGES, GREEDY)
    assert a_alone.text == a_out.text and base_alone.text == base_out.text
    assert set(engine.adapters) >= {str(Path(first).resolve()), str(Path(second).resolve())}


@pytest.mark.slow
async def test_shared_system_prompt_is_prefilled_once_with_the_same_result(engine):
    system = {"role": "system", "content": "You play Tic-Tac-Toe. " + "Three marks in a row win; players alternate. " * 5}
    prompts = [[system, {"role": "user", "content": f"Turn {i}: free cells {list(range(1, 10 - i))}."}] for i in range(3)]
    saved = engine.stats.cached_prompt_tokens
    batched = await asyncio.gather(*[engine.chat(m, GREEDY) for m in prompts])
    assert engine.stats.cached_prompt_tokens - saved >= 2 * 32
    alone = [await engine.chat(m, GREEDY) for m in prompts]
    assert [g.text for g in batched] == [g.text for g in alone]


def test_prefix_groups_put_prompts_that_share_a_prefix_together():
    from arena.llm.engines.scoring import MIN_SHARED_PREFIX, prefix_groups

    rules = list(range(100, 100 + MIN_SHARED_PREFIX + 5))
    seat0 = [[1, *rules, 7], [1, *rules, 8, 9]]
    seat1 = [[2, *rules, 7]]
    short = [[1, 5]]
    prompts = [seat1[0], seat0[0], short[0], seat0[1]]
    groups = prefix_groups(prompts)
    assert sorted(sorted(g) for g in groups) == [[0], [1, 3], [2]]
    assert prefix_groups([[4, 5]]) == [[0]]


@pytest.mark.slow
async def test_choose_shares_each_seats_prefix_and_scores_as_alone(engine):
    """Both seats' moves in one batch: each seat's prompts prefill their common prefix once, and
    every option scores as it does alone (one request, no shared prefix), to float rounding."""
    rules = "Three marks in a row win; players alternate; a full board is a draw. " * 4
    prompts = [
        [{"role": "system", "content": f"You play Tic-Tac-Toe as {mark}. {rules}"}, {"role": "user", "content": f"Turn {i}: pick a free cell."}]
        for mark in ("X", "O")
        for i in range(2)
    ]
    options = ["4", "[4]", "centre"]
    saved = engine.stats.cached_prompt_tokens
    batched = await asyncio.gather(*[engine.choose(m, options) for m in prompts])
    assert engine.stats.cached_prompt_tokens - saved >= 2 * 32  # one shared prefix per seat
    for messages, (_, together) in zip(prompts, batched):
        _, alone = await engine.choose(messages, options)
        assert together.option_logprobs == pytest.approx(alone.option_logprobs, abs=1e-4)
