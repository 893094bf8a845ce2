"""vLLM engine on the shipped model: token-in/token-out sessions, seeds, prefix cache, fallback.

One engine per test session (the `vllm_engine` fixture in tests/conftest.py); skipped only where
vLLM is not installed.
"""

from __future__ import annotations

import asyncio

import pytest

from arena.llm.engine import SamplingParams
from arena.match import play_match
from arena.policy import PolicySpecError, make_policy
from games.registry import make_game

MESSAGES = [
    {"role": "system", "content": "You play Tic-Tac-Toe as X."},
    {"role": "user", "content": "Board:\n1|2|3\n4|5|6\n7|8|9\nPick a free cell. Answer like [5]."},
]

pytestmark = pytest.mark.slow


async def test_token_ids_in_give_the_same_reply_as_text(vllm_engine):
    greedy = SamplingParams(temperature=0.0, max_new_tokens=8)
    from_text = await vllm_engine.chat(MESSAGES, greedy)
    from_ids = await vllm_engine.chat_ids(vllm_engine.template.encode(MESSAGES), greedy)
    assert from_ids.completion_ids == from_text.completion_ids
    assert from_text.prompt_ids == vllm_engine.template.encode(MESSAGES)
    assert 1 <= len(from_text.completion_ids) <= 8


async def test_seeded_requests_reproduce_in_one_batch(vllm_engine):
    a, b, other = await asyncio.gather(
        vllm_engine.chat(MESSAGES, SamplingParams(temperature=1.0, max_new_tokens=10, seed=7)),
        vllm_engine.chat(MESSAGES, SamplingParams(temperature=1.0, max_new_tokens=10, seed=7)),
        vllm_engine.chat(MESSAGES, SamplingParams(temperature=1.0, max_new_tokens=3, seed=8)),
    )
    assert a.completion_ids == b.completion_ids
    assert other.completion_tokens <= 3


async def test_history_match_grows_one_token_sequence_and_hits_the_prefix_cache(vllm_engine):
    policy = make_policy("local,engine=vllm,max_new_tokens=12,temperature=0.7,seed=3")
    assert policy.engine is vllm_engine and policy.engine_kind == "vllm"
    sent: list[tuple[list[int], list[int]]] = []
    original = vllm_engine.chat_ids

    async def recording(prompt_ids, params, adapter=None):
        generation = await original(prompt_ids, params, adapter)
        sent.append((list(prompt_ids), list(generation.completion_ids)))
        return generation

    queries0, hits0 = vllm_engine.prefix_cache_counters()
    policy.engine.chat_ids = recording
    try:
        record = await play_match(make_game("tictactoe"), [policy, make_policy("random")], seed=5)
    finally:
        del policy.engine.chat_ids
    stats = policy.sessions.stats
    assert len(sent) >= 3 and stats.first == 1
    assert stats.incremental == len(sent) - 1 - stats.fallback - stats.trimmed
    assert stats.incremental >= 2
    # Each prompt starts with the previous prompt and the exact ids sampled for it.
    for (prompt, completion), (following, _) in zip(sent, sent[1:]):
        assert following[: len(prompt) + len(completion)] == prompt + completion
    # The reply ids recorded for training are the sampled ones, and the turn log shows their text.
    texts = [t.raw for t in record.turns if t.player == 0]
    assert texts[0] == vllm_engine.tokenizer.decode(sent[0][1], skip_special_tokens=True)
    # vLLM's counters (its metrics may lag a step, so only their growth is checked here; the
    # bench reports the rate): the grown prompts were served partly from the prefix cache.
    queries, hits = vllm_engine.prefix_cache_counters()
    assert queries > queries0 and hits > hits0


async def test_choice_mode_answers_with_a_legal_move(vllm_engine):
    policy = make_policy("local,engine=vllm,mode=json")
    record = await play_match(make_game("tictactoe"), [policy, make_policy("random")], seed=2)
    assert all(t.valid for t in record.turns if t.player == 0)


def test_engine_spec_is_checked():
    with pytest.raises(PolicySpecError, match="engine must be one of"):
        make_policy("local,engine=onnx")
