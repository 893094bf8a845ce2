"""Reasoning models against a fake provider on 127.0.0.1 that answers as the real APIs document:
the reasoning is stored apart from the reply (turn meta `reasoning`), never parsed as a move, and
counted; budgets reach the provider; a reply cut while reasoning is asked once more, shorter.

What the fake provider sends, and where that shape is documented (checked 2026-11-24):
- OpenAI Chat Completions (platform.openai.com/docs/api-reference/chat/object): `finish_reason`
  is "length" when the `max_tokens` limit was reached; `usage.completion_tokens_details
  .reasoning_tokens` counts the reasoning tokens inside `completion_tokens`; a reasoning model cut
  during its hidden reasoning answers with empty `content` and finish_reason "length" (OpenAI's
  reasoning guide, "Allocating space for reasoning").
- DeepSeek (api-docs.deepseek.com/guides/reasoning_model): `deepseek-reasoner` returns the chain
  of thought in `message.reasoning_content`, "at the same level as content"; its responses carry
  `usage.completion_tokens_details.reasoning_tokens` (the example used below: prompt 10,
  completion 48, reasoning 38). vLLM's reasoning parsers and OpenRouter send the same field.
- LiteLLM (docs.litellm.ai/docs/reasoning_content): `reasoning_content` on the message for every
  provider, and `thinking_blocks` (`{"type": "thinking", "thinking": ..., "signature": ...}`) for
  Anthropic; `thinking={"type": "enabled", "budget_tokens": N}` is the budget it passes to
  Anthropic (and maps to Gemini's thinkingBudget).
- Anthropic's OpenAI SDK compatibility (docs.claude.com/en/api/openai-sdk): extended thinking is
  enabled by adding the `thinking` parameter to the request body (`extra_body` in the SDK).
"""

from __future__ import annotations

import asyncio
import math
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi import FastAPI, Request

from arena.game import Observation
from arena.llm import litellm_policy, reasoning
from arena.llm.reasoning import ReasoningBudget, reasoning_of_message, split_text
from arena.match import MatchRecord, play_match
from arena.policy import MoveRequest, PolicySpecError, make_policy
from arena.scripted import BotPolicy
from games.registry import make_game
from tests.local_server import serve_in_thread
from tests.llm.test_policies import ScriptedLLM


class FakeProvider:
    """Answers /v1/chat/completions with the scripted replies in order (the last one repeats) and
    keeps every request body."""

    def __init__(self) -> None:
        self.script: list[dict[str, Any]] = []
        self.bodies: list[dict[str, Any]] = []
        self.app = FastAPI()

        @self.app.post("/v1/chat/completions")
        async def chat(request: Request) -> dict[str, Any]:
            body = await request.json()
            self.bodies.append(body)
            reply = self.script.pop(0) if len(self.script) > 1 else self.script[0]
            return completion(body["model"], **reply)

    def answer(self, *replies: dict[str, Any]) -> None:
        self.script, self.bodies = list(replies), []


def completion(model: str, content: str | None = "", finish: str = "stop", reasoning_content: str | None = None,
               prompt_tokens: int = 10, completion_tokens: int = 48, reasoning_tokens: int | None = None) -> dict[str, Any]:
    """A chat.completion object as OpenAI and DeepSeek document it."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning_content is not None:
        message["reasoning_content"] = reasoning_content
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens}
    if reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}], "usage": usage}


@pytest.fixture(scope="module")
def provider():
    fake = FakeProvider()
    with serve_in_thread(fake.app) as url:
        fake.url = url + "/v1"
        yield fake


def _spec(kind: str, provider: FakeProvider, extra: str = "") -> str:
    if kind == "openai":
        return f"openai:reasoner,base_url={provider.url},max_tokens=2048{extra}"
    return f"litellm:openai/reasoner,api_base={provider.url},api_key_env=ARENA_TEST_DUMMY_KEY,max_tokens=2048{extra}"


def _request(legal=("0", "4", "8")) -> MoveRequest:
    obs = Observation(player=0, text="board", legal_moves=list(legal), role="X")
    return MoveRequest(game_id="g", game_name="G", rules="rules", observation=obs, match_id="m1")


async def _act(spec: str):
    policy = make_policy(spec)
    try:
        return await policy.act(_request())
    finally:
        await policy.close()


@pytest.fixture(autouse=True)
def _dummy_key(monkeypatch):
    monkeypatch.setenv("ARENA_TEST_DUMMY_KEY", "not-a-real-key")


# ---------------------------------------------------------------- stored apart, never parsed, counted


@pytest.mark.parametrize("kind", ["openai", "litellm"])
def test_reasoning_content_is_stored_apart_never_played_and_counted_from_usage(provider, kind):
    provider.answer({"content": "[4]", "reasoning_content": "Corner [8] looks tempting, but the centre wins.", "reasoning_tokens": 38})
    reply = asyncio.run(_act(_spec(kind, provider)))
    assert (reply.action, reply.raw) == ("4", "[4]")  # the [8] in the reasoning is never a move
    assert reply.meta["reasoning"] == "Corner [8] looks tempting, but the centre wins."
    assert (reply.prompt_tokens, reply.completion_tokens) == (10, 48)
    assert (reply.meta["reasoning_tokens"], reply.meta["answer_tokens"]) == (38, 10)
    assert "reasoning_tokens_estimated" not in reply.meta


def test_a_reply_that_only_reasoned_is_no_move_even_if_its_reasoning_names_one(provider):
    provider.answer({"content": "I am not sure.", "reasoning_content": "[8] is the move."})
    reply = asyncio.run(_act(_spec("openai", provider)))
    assert reply.meta["parse"] == "unformatted" and reply.rejection and reply.action != "8"


def test_think_text_is_set_apart_and_its_tokens_estimated_and_marked(provider):
    thought = "<think>0 or 8? [0] is a trap.</think>"
    provider.answer({"content": f"{thought}\nI play [8]", "completion_tokens": 30})
    reply = asyncio.run(_act(_spec("openai", provider)))
    assert (reply.action, reply.raw) == ("8", "I play [8]")
    assert reply.meta["reasoning"] == "0 or 8? [0] is a trap."
    estimate = math.ceil(len("0 or 8? [0] is a trap.") / reasoning.CHARS_PER_TOKEN)
    assert (reply.meta["reasoning_tokens"], reply.meta["answer_tokens"]) == (estimate, 30 - estimate)
    assert reply.meta["reasoning_tokens_estimated"] is True


def test_a_plain_reply_records_zero_reasoning_tokens(provider):
    provider.answer({"content": "[0]", "completion_tokens": 3})
    reply = asyncio.run(_act(_spec("openai", provider)))
    assert (reply.meta["reasoning_tokens"], reply.meta["answer_tokens"]) == (0, 3) and "reasoning" not in reply.meta


# ---------------------------------------------------------------- budgets reach the provider


@pytest.mark.parametrize("kind", ["openai", "litellm"])
def test_reasoning_effort_is_sent_as_openais_parameter(provider, kind):
    provider.answer({"content": "[0]"})
    reply = asyncio.run(_act(_spec(kind, provider, ",reasoning_effort=high")))
    assert provider.bodies[0]["reasoning_effort"] == "high"
    assert reply.meta["harness"] == {"sampler": "single", "parser": "strict", "prompt": "default", "reasoning_effort": "high"}


def test_the_openai_kind_sends_a_thinking_budget_in_the_body_as_anthropic_reads_it(provider):
    provider.answer({"content": "[0]"})
    asyncio.run(_act(_spec("openai", provider, ",thinking_budget=1500")))
    assert provider.bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 1500}


def test_openais_own_api_gets_the_reply_cap_as_max_completion_tokens(monkeypatch, provider):
    """OpenAI's reasoning models refuse `max_tokens` (API reference: deprecated, "not compatible
    with o-series models"); other servers keep getting `max_tokens`."""
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    official = make_policy("openai:o4-mini,reasoning_effort=low,max_tokens=4096")._sampling_kwargs(None)
    assert official == {"max_completion_tokens": 4096}
    assert make_policy(_spec("openai", provider))._sampling_kwargs(None) == {"max_tokens": 2048}


def test_litellm_passes_a_thinking_budget_to_providers_that_take_one(monkeypatch):
    seen: dict[str, Any] = {}

    async def acompletion(**kwargs):
        seen.update(kwargs)
        message = SimpleNamespace(content="[4]", tool_calls=None, reasoning_content="thought",
                                  thinking_blocks=[{"type": "thinking", "thinking": "thought", "signature": "s"}])
        return SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="stop")],
                               usage=SimpleNamespace(prompt_tokens=5, completion_tokens=9, completion_tokens_details=None))

    monkeypatch.setenv("ANTHROPIC_API_KEY", "not-a-real-key")
    policy = make_policy("litellm:anthropic/claude-3-7-sonnet-20250219,thinking_budget=2048,max_tokens=4096")
    real = litellm_policy._litellm()
    monkeypatch.setattr(policy, "_litellm", SimpleNamespace(acompletion=acompletion, completion_cost=real.completion_cost))
    reply = asyncio.run(policy.act(_request()))
    assert seen["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert reply.action == "4" and reply.meta["reasoning"] == "thought"


@pytest.mark.parametrize("spec, message", [
    ("openai:m,base_url=http://h/v1,reasoning_effort=max", "reasoning_effort must be one of low, medium, high, not 'max'"),
    ("openai:m,base_url=http://h/v1,thinking_budget=lots", "thinking_budget must be a whole number of tokens"),
    ("openai:m,base_url=http://h/v1,thinking_budget=4096", r"thinking_budget \(4096\) must be below max_new_tokens \(256\)"),
    ("openai:m,base_url=http://h/v1,reasoning_effort=low,thinking_budget=10", "give reasoning_effort or thinking_budget, not both"),
    ("local,reasoning_effort=low", r"unknown parameter\(s\) reasoning_effort"),
    ("litellm:openai/local,api_base=http://h/v1,thinking_budget=10", "thinking_budget: LiteLLM sends no thinking parameter to openai/local"),
])
def test_bad_budgets_get_one_line_naming_the_parameter(spec, message):
    with pytest.raises(PolicySpecError, match=message) as err:
        make_policy(spec)
    assert "\n" not in str(err.value)


# ---------------------------------------------------------------- the length retry


def test_cut_while_hidden_reasoning_is_retried_once_with_lower_effort(provider):
    provider.answer(
        {"content": "", "finish": "length", "completion_tokens": 2048, "reasoning_tokens": 2048},
        {"content": "[8]", "completion_tokens": 700, "reasoning_tokens": 690},
    )
    reply = asyncio.run(_act(_spec("openai", provider, ",reasoning_effort=high")))
    assert [b.get("reasoning_effort") for b in provider.bodies] == ["high", "medium"]
    assert reply.action == "8" and reply.meta["finish_reason"] == "stop"
    assert reply.meta["length_retry"] == {"how": "reasoning_effort=medium",
                                          "first": {"finish_reason": "length", "completion_tokens": 2048, "reasoning_tokens": 2048, "reasoning_chars": 0}}
    assert (reply.prompt_tokens, reply.completion_tokens) == (20, 2748)  # the move spent both calls
    assert (reply.meta["reasoning_tokens"], reply.meta["answer_tokens"]) == (2738, 10)


def test_a_thinking_budget_is_halved_on_the_retry(provider):
    provider.answer({"content": "", "finish": "length", "reasoning_content": "long..."}, {"content": "[0]"})
    reply = asyncio.run(_act(_spec("openai", provider, ",thinking_budget=1500")))
    assert [b["thinking"]["budget_tokens"] for b in provider.bodies] == [1500, 1024]  # never below Anthropic's 1024
    assert reply.meta["length_retry"]["how"] == "thinking_budget=1024" and reply.action == "0"


@pytest.mark.parametrize("kind", ["openai", "litellm"])
def test_an_unclosed_think_without_a_budget_is_retried_asking_to_reason_briefly(provider, kind):
    provider.answer({"content": "<think>Let me enumerate every line: 0, then 4, then", "finish": "length"}, {"content": "<think>short</think>[4]"})
    reply = asyncio.run(_act(_spec(kind, provider)))
    assert len(provider.bodies) == 2
    assert reasoning.REASON_BRIEFLY not in provider.bodies[0]["messages"][-1]["content"]
    assert provider.bodies[1]["messages"][-1]["content"].endswith(reasoning.REASON_BRIEFLY)
    assert reply.action == "4" and reply.meta["reasoning"] == "short"
    assert reply.meta["length_retry"]["how"] == "instruction" and reply.meta["length_retry"]["first"]["unclosed_think"] is True


def test_the_retry_is_made_once_then_the_reply_counts_as_invalid(provider):
    provider.answer({"content": "<think>and so on", "finish": "length"})
    reply = asyncio.run(_act(_spec("openai", provider)))
    assert len(provider.bodies) == 2 and reply.rejection and "no move in square brackets" in reply.rejection
    record = asyncio.run(_play(make_policy(_spec("openai", provider))))
    first = record.turns[0]
    assert (first.valid, first.meta["parse"], first.meta["length_retry"]["how"]) == (False, "empty", "instruction")
    assert "no move in square brackets" in first.feedback and first.meta["reasoning"] == "and so on"


def test_a_reply_cut_after_its_answer_began_is_not_retried(provider):
    provider.answer({"content": "I think the centre, so [4", "finish": "length"})
    reply = asyncio.run(_act(_spec("openai", provider)))
    assert len(provider.bodies) == 1 and "length_retry" not in reply.meta


async def _play(policy) -> MatchRecord:
    try:
        return await play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=3)
    finally:
        await policy.close()


# ---------------------------------------------------------------- reading reasoning


@pytest.mark.parametrize("text, answer, thought, unclosed", [
    ("<think>a</think>[4]", "[4]", "a", False),
    ("<THINKING>a</THINKING> x <think>b</think> [4]", "x [4]", "a\n\nb", False),
    ("the template opened it</think>[4]", "[4]", "the template opened it", False),
    ("[4] <think>still going", "[4]", "still going", True),
    ("no reasoning [4]", "no reasoning [4]", "", False),
])
def test_split_text(text, answer, thought, unclosed):
    assert split_text(text) == reasoning.SplitText(answer, thought, unclosed)


def test_reasoning_is_read_from_every_field_providers_use():
    assert reasoning_of_message({"reasoning_content": "rc"}) == "rc"
    assert reasoning_of_message(SimpleNamespace(reasoning_content=None, reasoning="openrouter")) == "openrouter"
    blocks = [{"type": "thinking", "thinking": "one", "signature": "s"}, {"type": "redacted_thinking", "data": "x"}, {"type": "thinking", "thinking": "two"}]
    assert reasoning_of_message({"thinking_blocks": blocks}) == "one\n\ntwo"


def test_the_shorter_request_rule():
    assert ReasoningBudget(effort="medium").shorter().how == "reasoning_effort=low"
    low = ReasoningBudget(effort="low").shorter()
    assert (low.instruction, low.budget.effort) == (True, "low")
    assert ReasoningBudget(thinking_budget=8000).shorter().how == "thinking_budget=4000"
    assert ReasoningBudget(thinking_budget=1024).shorter().instruction is True
    assert ReasoningBudget().shorter().how == "instruction"


async def test_local_policies_count_reasoning_with_their_tokenizer():
    """A scripted model whose counter is exact: the count is not marked estimated."""

    class Counting(ScriptedLLM):
        def count_text_tokens(self, text):
            return len(text.split()), False

    policy = Counting([reasoning_completion("<think>one two three</think>[0]", completion_tokens=9)])
    reply = await policy.act(_request())
    assert (reply.meta["reasoning_tokens"], reply.meta["answer_tokens"]) == (3, 6) and "reasoning_tokens_estimated" not in reply.meta


def reasoning_completion(content: str, **fields):
    from arena.llm.llm_policy import Completion

    return Completion(content=content, prompt_tokens=11, **fields)
