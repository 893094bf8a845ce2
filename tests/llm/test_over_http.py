"""The openai and litellm policies against `arena serve-model` run as a real subprocess on
127.0.0.1: text, tools and json modes, and a fault-injected server (429 with Retry-After, 500,
hangs, garbage) under which every match still ends with a recorded result."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from arena.match import play_match
from arena.policy import make_policy
from arena.scripted import BotPolicy
from games.registry import make_game
from tests.local_server import serve_model_process

pytestmark = pytest.mark.slow

FAULTS = "429=0.2,500=0.1,timeout=0.05,garbage=0.1"


@pytest.fixture(scope="module")
def server():
    with serve_model_process() as url:
        yield url


@pytest.fixture(scope="module")
def faulty_server():
    with serve_model_process("--faults", FAULTS, "--fault-seed", "7", "--fault-hang-s", "60") as url:
        yield url


def _spec(kind: str, url: str, mode: str, extra: str = "") -> str:
    sampling = "max_tokens=20,temperature=0.7,seed=1,timeout=120"
    if kind == "openai":
        return f"openai:local,base_url={url},mode={mode},{sampling}{extra}"
    return f"litellm:openai/local,api_base={url},api_key_env=ARENA_TEST_DUMMY_KEY,mode={mode},{sampling}{extra}"


async def _play_all(specs: list[str]):
    policies = [make_policy(spec) for spec in specs]
    try:
        games = [play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=i, match_id=f"m{i}") for i, policy in enumerate(policies)]
        return await asyncio.gather(*games)  # concurrent: the server batches them
    finally:
        for policy in policies:
            await policy.close()


def test_openai_and_litellm_in_every_mode(server, monkeypatch):
    monkeypatch.setenv("ARENA_TEST_DUMMY_KEY", "not-a-real-key")
    specs = [_spec(kind, server, mode) for kind in ("openai", "litellm") for mode in ("text", "tools", "json")]
    records = asyncio.run(_play_all(specs))
    for spec, record in zip(specs, records):
        assert record.status == "finished" and record.outcome is not None, spec
        llm_turns = [t for t in record.turns if t.player == 0]
        assert llm_turns and all(t.error is None for t in llm_turns), spec
        assert all(t.prompt_tokens and t.prompt_tokens > 50 and t.completion_tokens for t in llm_turns), spec
        assert all(t.cost_usd is None for t in llm_turns), spec  # no price is known for a local model
        mode = "text" if "mode=text" in spec else ("tools" if "mode=tools" in spec else "json")
        assert {t.meta["mode"] for t in llm_turns} == {mode}
        if mode != "text":  # the server picks among the enum: always a legal move
            assert all(t.valid and t.meta["parse"] == "structured" for t in llm_turns), spec
        else:
            assert all(t.completion_tokens <= 20 for t in llm_turns)


def test_fault_injected_server_every_match_ends_with_a_result(faulty_server, monkeypatch):
    monkeypatch.setenv("ARENA_TEST_DUMMY_KEY", "not-a-real-key")
    retry = ",timeout=15,max_retries=5,retry_budget=90"
    specs = [_spec(kind, faulty_server, mode, retry) for kind in ("openai", "litellm") for mode in ("tools", "json", "tools")]
    records = asyncio.run(_play_all(specs))
    assert all(r.status == "finished" and r.outcome is not None for r in records)
    turns = [t for r in records for t in r.turns if t.player == 0]
    errors = Counter(e for t in turns for e in t.meta.get("retry_errors", []))
    assert errors["429"] and sum(errors.values()) >= 3, errors  # faults were injected and retried
    for turn in turns:  # Retry-After: 1 was honoured
        if turn.meta.get("retry_errors") and turn.meta["retry_errors"][0] == "429":
            assert turn.meta["backoff_s"] >= 1.0
    # Garbage replies (no tool call, no JSON) were parsed as prose and judged by the game.
    assert any(t.meta.get("parse") not in (None, "structured") for t in turns)
    failures = [t for t in turns if t.error]
    assert all(t.error.startswith("policy failure") for t in failures)


def test_harness_variants_and_reasoning_budgets_over_serve_model(server, monkeypatch):
    """Every harness variant against the real server: the budget is sent (serve-model, like many
    OpenAI-compatible servers, ignores it), the non-reasoning model's tokens are all answer tokens,
    every answer of a vote or rethink is recorded with its tokens, and the extractor is the same
    server asked through `parser=extractor:openai:local;base_url=...`."""
    monkeypatch.setenv("ARENA_TEST_DUMMY_KEY", "not-a-real-key")
    extractor = f"parser=extractor:openai:local;base_url={server};max_tokens=8"
    specs = [
        _spec("openai", server, "text", ",sampler=vote:3,reasoning_effort=low"),
        _spec("litellm", server, "text", ",sampler=rethink:2,reasoning_effort=high"),
        _spec("openai", server, "text", f",{extractor},prompt=no-legal-moves"),
        _spec("openai", server, "text", ",thinking_budget=10,parse=lenient"),
    ]
    records = asyncio.run(_play_all(specs))
    expected = [
        {"sampler": "vote:3", "parser": "strict", "prompt": "default", "reasoning_effort": "low"},
        {"sampler": "rethink:2", "parser": "strict", "prompt": "default", "reasoning_effort": "high"},
        {"sampler": "single", "parser": f"extractor:openai:local;base_url={server};max_tokens=8", "prompt": "no-legal-moves"},
        {"sampler": "single", "parser": "fuzzy", "prompt": "default", "thinking_budget": 10},
    ]
    for spec, record, harness in zip(specs, records, expected):
        assert record.status == "finished", spec
        turns = [t for t in record.turns if t.player == 0 and t.error is None]
        assert turns, spec
        for turn in turns:
            assert turn.meta["harness"] == harness, spec
            assert turn.meta["reasoning_tokens"] == 0 and turn.meta["answer_tokens"] == turn.completion_tokens, spec
            assert "reasoning" not in turn.meta
    vote_turns = [t for t in records[0].turns if t.player == 0 and t.error is None]
    assert all(len(t.meta["samples"]) == 3 and t.completion_tokens == sum(s["completion_tokens"] for s in t.meta["samples"]) for t in vote_turns)
    rethinks = [t.meta["rethinks"] for t in records[1].turns if t.player == 0 and t.error is None]
    assert all(0 <= n <= 2 for n in rethinks)
    asked = [t.meta["extractor"] for t in records[2].turns if "extractor" in t.meta]
    assert asked and all(a["prompt_tokens"] and "spec" in a for a in asked)  # the 135M model rarely answers in brackets
