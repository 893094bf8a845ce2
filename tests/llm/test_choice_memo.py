"""Choice scores are remembered while the weights stay the same (arena/llm/engines/choice_memo.py):
an identical choose() takes the first one's scores and draws with its own seed; any in-place change
of a weight (the learner's update) makes the next choose() compute again."""

from __future__ import annotations

import asyncio
import random

import pytest
import torch

from arena.llm.engines import open_engine
from arena.llm.engines.choice_memo import ChoiceMemo, ChoiceScores, weights_signature
from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, Sample, write_initial_adapter

MESSAGES = [{"role": "user", "content": "Kuhn poker. Your card: K. Opponent bet. Call or fold?"}]
OPTIONS = ["call", "fold"]


@pytest.mark.parametrize("share_prefix", [True, False], ids=["cpu-layout", "cuda-layout"])
def test_an_identical_choice_takes_the_first_ones_scores_and_draws_with_its_own_seed(share_prefix, monkeypatch):
    """In both layouts (`shares_prefix_on`): a batch whose every request is remembered scores
    nothing. On CUDA's it once scored an empty batch and failed every move of a self-play run."""
    engine = open_engine("local", "hf")
    monkeypatch.setattr(engine, "_choice_memo", ChoiceMemo())  # the other layout's scores are not these
    monkeypatch.setattr(engine, "share_prefix", share_prefix)
    hits = engine.stats.choice_memo_hits

    async def draws():
        return await asyncio.gather(*(engine.choose(MESSAGES, OPTIONS, temperature=5.0, seed=seed) for seed in range(40)))

    first = asyncio.run(draws())
    assert engine.stats.choice_memo_hits - hits >= 39  # one computed, the rest remembered
    assert len({tuple(g.option_logprobs) for _, g in first}) == 1
    forwards = engine.stats.choose_forwards
    again = asyncio.run(draws())
    assert engine.stats.choose_forwards == forwards  # every choice remembered: no forward at all
    assert [m for m, _ in again] == [m for m, _ in first]  # same seeds, same draws
    assert {m for m, _ in first} == set(OPTIONS)  # the seeds still draw both moves at T = 5


def test_the_memo_forgets_scores_when_the_weights_change(tmp_path):
    engine = open_engine("local", "hf")
    write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), tmp_path / "adapter", seed=5)
    learner = Learner(engine, tmp_path / "adapter", AlgorithmSettings(micro_batch_size=2, minibatch_size=2, learning_rate=5e-2),
                      temperature=1.0, max_new_tokens=4)
    adapter = str(tmp_path / "adapter")
    _, before = asyncio.run(engine.choose(MESSAGES, OPTIONS, adapter))
    signature = weights_signature(engine.model)
    prompt = engine.encode(MESSAGES)
    options = engine.option_ids(OPTIONS)
    samples = [Sample(prompt, options[0], advantage=1.0, option_ids=options, chosen=0),
               Sample(prompt, options[1], advantage=-1.0, option_ids=options, chosen=1)]
    learner.update(samples, random.Random(0))
    assert weights_signature(engine.model) != signature
    hits = engine.stats.choice_memo_hits
    _, after = asyncio.run(engine.choose(MESSAGES, OPTIONS, adapter))
    assert engine.stats.choice_memo_hits == hits  # computed again, not remembered
    assert after.option_logprobs[0] - after.option_logprobs[1] > before.option_logprobs[0] - before.option_logprobs[1]


def test_the_memo_is_bounded_and_keeps_the_most_recently_used():
    memo = ChoiceMemo(entries=2)
    scores = ChoiceScores(totals=torch.zeros(2), token_logprobs=torch.zeros(2, 1))
    keys = [ChoiceMemo.key("w", "base", [i], [[1], [2]]) for i in range(3)]
    memo.put(keys[0], scores)
    memo.put(keys[1], scores)
    assert memo.get(keys[0]) is scores  # now the most recent
    memo.put(keys[2], scores)
    assert len(memo) == 2 and memo.get(keys[1]) is None and memo.get(keys[0]) is scores


def test_option_ids_are_remembered_and_each_caller_gets_its_own_lists(monkeypatch):
    engine = open_engine("local", "hf")
    expected = [engine.tokenizer(o, add_special_tokens=False)["input_ids"] + [engine._end_ids[0]] for o in OPTIONS]
    assert engine.option_ids(OPTIONS) == expected
    calls = []
    tokenizer = engine.tokenizer
    monkeypatch.setattr(engine, "tokenizer", lambda *a, **k: calls.append(a) or tokenizer(*a, **k))
    ids = engine.option_ids(OPTIONS)
    assert ids == expected and calls == []  # remembered: no tokenizer call
    ids[0].append(-1)
    assert engine.option_ids(OPTIONS) == expected  # the caller's change stays the caller's
    assert engine.option_ids(["raise"]) == [tokenizer("raise", add_special_tokens=False)["input_ids"] + [engine._end_ids[0]]] and len(calls) == 1


def test_an_adapter_path_is_resolved_once_per_working_directory(tmp_path, monkeypatch):
    import arena.llm.engines.hf as hf
    from arena.llm.model import ModelNotAvailable

    engine = open_engine("local", "hf")
    write_initial_adapter("local", LoraSettings(r=2, alpha=4, target_modules=["q_proj"]), tmp_path / "lora", seed=1)
    resolved = []
    real_key = hf.adapter_key
    monkeypatch.setattr(hf, "adapter_key", lambda path: resolved.append(path) or real_key(path))
    monkeypatch.chdir(tmp_path)

    async def choose(adapter):
        return await engine.choose(MESSAGES, OPTIONS, adapter)

    _, absolute = asyncio.run(choose(str(tmp_path / "lora")))  # loaded: resolved
    first = len(resolved)
    _, again = asyncio.run(choose(str(tmp_path / "lora")))
    assert len(resolved) == first and again.option_logprobs == absolute.option_logprobs  # remembered, the same adapter
    _, relative = asyncio.run(choose("lora"))
    assert len(resolved) == first + 1 and relative.option_logprobs == absolute.option_logprobs  # another spelling: resolved, same folder
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    with pytest.raises(ModelNotAvailable, match="'lora'"):  # from another directory "lora" is no folder: not the remembered one
        asyncio.run(choose("lora"))
