"""LLM policies without a model: a scripted chat function, and the real openai SDK over a mock
HTTP transport (modes, parsing, retries with Retry-After, the hard cap, spec errors, secrets)."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest

from arena.game import Observation
from arena.llm import litellm_policy
from arena.llm.harness import Harness
from arena.llm.llm_policy import OPENAI_PARAMS, Completion, LLMPolicy, LLMSettings
from arena.llm.parsers import ParserChoice
from arena.llm.prompt_variants import PromptVariant
from arena.llm.samplers import Sampler
from arena.llm.openai_policy import OpenAIPolicy
from arena.llm.prompting import Mode
from arena.llm.retry import RetryConfig, RetryStats, call_with_retries, parse_retry_after
from arena.match import play_match
from arena.policy import MoveRequest, PolicyFailure, PolicySpec, PolicySpecError, make_policy
from arena.scripted import BotPolicy
from games.registry import make_game


class ScriptedLLM(LLMPolicy):
    """An LLMPolicy whose model is a list of canned completions; it records every prompt. Harness
    variants by name: `sampler="vote:3"`, `parser="fuzzy"`, `prompt="no-legal-moves"`."""

    def __init__(self, replies, spec="fake", sampler="single", parser="strict", prompt="default", **settings):
        harness = Harness(Sampler.parse(sampler), ParserChoice.parse(parser), PromptVariant.parse(prompt))
        super().__init__(LLMSettings(harness=harness, **settings))
        self.replies = list(replies)
        self.calls: list[dict] = []
        self.name = spec

    async def _complete(self, messages, mode, legal_moves, seed, budget):
        self.calls.append({"messages": messages, "mode": mode, "legal": legal_moves, "seed": seed, "budget": budget})
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        if callable(reply):
            reply = reply(legal_moves)
        if isinstance(reply, Completion):
            return reply, RetryStats(attempts=1)
        return Completion(content=reply, prompt_tokens=11, completion_tokens=3), RetryStats(attempts=1)


def _request(legal=("0", "4", "8"), text="board", player=0, attempt=0):
    obs = Observation(player=player, text=text, legal_moves=list(legal) if legal is not None else None, role="X")
    return MoveRequest(game_id="g", game_name="G", rules="rules", observation=obs, attempt=attempt, match_id="m1")


# ---------------------------------------------------------------- modes and parsing


async def test_text_mode_parses_the_move_and_reports_tokens():
    policy = ScriptedLLM(["Centre is best: [4]"])
    reply = await policy.act(_request())
    assert reply.action == "4" and reply.raw == "Centre is best: [4]"
    assert (reply.prompt_tokens, reply.completion_tokens) == (11, 3)
    assert reply.meta["mode"] == "text" and reply.meta["parse"] == "bracket"


@pytest.mark.parametrize("mode", [Mode.TOOLS, Mode.JSON])
async def test_structured_modes_fall_back_to_text_for_free_text_games(mode):
    policy = ScriptedLLM(["[Offer] 2 wood"], mode=mode)
    reply = await policy.act(_request(legal=None))
    assert policy.calls[0]["mode"] is Mode.TEXT and reply.action == "[Offer] 2 wood"


async def test_tool_arguments_become_the_move():
    policy = ScriptedLLM([Completion(content=None, tool_arguments='{"move": "8"}')], mode=Mode.TOOLS)
    reply = await policy.act(_request())
    assert reply.action == "8" and reply.raw == 'make_move({"move": "8"})' and reply.meta["parse"] == "structured"


async def test_every_move_gets_a_seed_and_providers_only_the_specs():
    a, b = _request(), _request(attempt=1)
    policy = ScriptedLLM(["[4]"])
    await policy.act(a)
    await policy.act(b)
    assert None not in {policy.calls[0]["seed"], policy.calls[1]["seed"]} and policy.calls[0]["seed"] != policy.calls[1]["seed"]
    assert "seed" not in _openai(lambda r: _ok({}))[0]._sampling_kwargs(123)
    assert _openai(lambda r: _ok({}), spec="openai:m,seed=4")[0]._sampling_kwargs(123)["seed"] == 123


# ---------------------------------------------------------------- through the match driver


async def test_rethinking_after_an_invalid_move_carries_the_games_feedback():
    policy = ScriptedLLM(["I pick cell 9", "[4]", "[0]", "[8]", "[2]", "[6]"])
    record = await play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=1)
    assert record.status == "finished"
    first, second = record.turns[0], record.turns[1]
    assert not first.valid and second.valid and second.attempt == 1
    retry_prompt = policy.calls[1]["messages"][-1]["content"]
    assert "rejected" in retry_prompt and first.feedback.split(" (")[0] in retry_prompt


async def test_secrets_never_reach_the_other_seats_prompts():
    seats = [ScriptedLLM([lambda legal: f"[{legal[0]}]"]), ScriptedLLM([lambda legal: f"[{legal[-1]}]"])]
    secrets: list[set[str]] = [set(), set()]

    def remember(game, turn):
        for p in range(2):
            secrets[p].update(game.secrets(p))

    for seed in range(4):
        await play_match(make_game("kuhn_poker"), seats, seed=seed, on_turn=remember)
    for seat, policy in enumerate(seats):
        text = json.dumps([c["messages"] for c in policy.calls])
        own = [s for s in secrets[seat] if s in text]
        assert own, "each seat sees its own card"
        for secret in secrets[1 - seat] - secrets[seat]:
            assert secret not in text, f"seat {seat} saw {secret!r}"


async def test_a_policy_failure_applies_the_games_rule_and_the_match_ends():
    class Down(ScriptedLLM):
        async def _complete(self, *args):
            raise PolicyFailure("provider down after retries")

    record = await play_match(make_game("tictactoe"), [Down(["x"]), BotPolicy()], seed=0)
    assert record.status == "finished" and record.outcome["ranks"] == [2, 1]
    assert record.turns[0].error.startswith("policy failure: provider down")


# ---------------------------------------------------------------- openai SDK over a mock transport

COMPLETION = {"id": "c", "object": "chat.completion", "created": 0, "model": "m", "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}}


def _ok(message: dict, finish="stop") -> httpx.Response:
    return httpx.Response(200, json={**COMPLETION, "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]})


def _openai(handler, spec="openai:m"):
    parsed = PolicySpec.parse(spec)
    settings = LLMSettings.from_spec(parsed, OPENAI_PARAMS, default_max_new_tokens=16)
    policy = OpenAIPolicy("m", settings, base_url="http://fake.test/v1", api_key="k", http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    waits: list[float] = []

    async def record_sleep(seconds: float) -> None:
        waits.append(seconds)

    policy.sleep = record_sleep
    return policy, waits


async def test_openai_tools_mode_sends_an_enum_schema_and_reads_the_call():
    seen = []

    def handler(request):
        seen.append(json.loads(request.content))
        call = {"id": "call_1", "type": "function", "function": {"name": "make_move", "arguments": '{"move": "4"}'}}
        return _ok({"content": None, "tool_calls": [call]}, "tool_calls")

    policy, _ = _openai(handler, "openai:m,mode=tools,temperature=0.2,seed=5")
    reply = await policy.act(_request())
    body = seen[0]
    assert body["tools"][0]["function"]["parameters"]["properties"]["move"]["enum"] == ["0", "4", "8"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "make_move"}}
    assert body["temperature"] == 0.2 and body["max_tokens"] == 16 and isinstance(body["seed"], int)
    assert reply.action == "4" and reply.prompt_tokens == 20 and reply.completion_tokens == 4
    await policy.close()


async def test_openai_json_mode_sends_response_format_and_parses_content():
    seen = []

    def handler(request):
        seen.append(json.loads(request.content))
        return _ok({"content": '{"move": "8"}'})

    policy, _ = _openai(handler, "openai:m,mode=json")
    reply = await policy.act(_request())
    schema = seen[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["move"]["enum"] == ["0", "4", "8"] and "tools" not in seen[0]
    assert reply.action == "8" and reply.meta["parse"] == "structured"


async def test_openai_retries_honour_retry_after_then_succeed():
    responses = [
        httpx.Response(429, headers={"Retry-After": "3"}, json={"error": {"message": "slow down"}}),
        httpx.Response(500, json={"error": {"message": "oops"}}),
        _ok({"content": "[0]"}),
    ]
    policy, waits = _openai(lambda request: responses.pop(0), "openai:m,max_retries=3")
    reply = await policy.act(_request())
    assert reply.action == "0"
    assert reply.meta["retries"] == 2 and reply.meta["retry_errors"] == ["429", "500"]
    assert waits[0] >= 3.0  # never earlier than the server asked
    assert 0 < waits[1] <= RetryConfig.max_delay_s


async def test_openai_hard_cap_raises_policy_failure_and_the_game_rule_applies():
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(503, json={"error": {"message": "overloaded"}})

    policy, waits = _openai(handler, "openai:m,max_retries=2")
    with pytest.raises(PolicyFailure, match=r"gave up after 3 attempt\(s\) \(503, 503, 503\)"):
        await policy.act(_request())
    assert len(calls) == 3 and len(waits) == 2 and waits[1] > waits[0] * 0.9  # backoff grows
    record = await play_match(make_game("tictactoe"), [policy, BotPolicy()], seed=0)
    assert record.status == "finished" and record.outcome["ranks"] == [2, 1]
    assert "policy failure" in record.turns[0].error and record.turns[0].penalty == "forfeit"


async def test_openai_client_errors_are_not_retried():
    calls = []

    def handler(request):
        calls.append(1)
        return httpx.Response(400, json={"error": {"message": "bad request"}})

    policy, _ = _openai(handler)
    with pytest.raises(PolicyFailure, match="400"):
        await policy.act(_request())
    assert len(calls) == 1


async def test_openai_timeouts_are_retried_then_capped():
    async def handler(request):
        await asyncio.sleep(5)
        return _ok({"content": "[0]"})

    policy, _ = _openai(handler, "openai:m,timeout=0.1,max_retries=1")
    with pytest.raises(PolicyFailure, match=r"\(timeout, timeout\)"):
        await policy.act(_request())


async def test_a_retry_after_beyond_the_budget_fails_at_once():
    policy, waits = _openai(
        lambda request: httpx.Response(429, headers={"Retry-After": "120"}, json={"error": {"message": "later"}}),
        "openai:m,retry_budget=30",
    )
    with pytest.raises(PolicyFailure, match="would pass the 30s cap"):
        await policy.act(_request())
    assert waits == []


async def test_call_with_retries_counts_total_seconds_on_its_clock():
    now = [0.0]

    async def fake_sleep(seconds):
        now[0] += seconds

    async def always_500(timeout):
        now[0] += 4.0
        raise httpx.HTTPStatusError("500", request=httpx.Request("POST", "http://x"), response=httpx.Response(500))

    config = RetryConfig(max_retries=100, budget_s=20.0, timeout_s=5.0, base_delay_s=1.0)
    with pytest.raises(PolicyFailure):
        await call_with_retries(always_500, config, sleep=fake_sleep, clock=lambda: now[0], rng=random.Random(0))
    assert now[0] <= 20.0 + 4.0  # the last attempt may start just before the cap


def test_retry_after_formats():
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("1500", milliseconds=True) == 1.5
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == pytest.approx(10.0)
    assert parse_retry_after("soon") is None and parse_retry_after("-3") == 0.0


# ---------------------------------------------------------------- spec strings


def test_key_literals_are_rejected_without_echoing_them(monkeypatch):
    with pytest.raises(PolicySpecError) as err:
        make_policy("openai:gpt-4o-mini,api_key=sk-secret123")
    assert "sk-secret123" not in str(err.value) and "api_key_env" in str(err.value)
    with pytest.raises(PolicySpecError) as err:
        make_policy("litellm:openai/x,api_key_env=sk-secret-456")
    assert "sk-secret-456" not in str(err.value)


def test_keys_come_from_the_named_env_var(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(PolicySpecError, match="OPENAI_API_KEY is not set"):
        make_policy("openai:gpt-4o-mini")
    with pytest.raises(PolicySpecError, match="MY_ROUTER_KEY .* is not set"):
        make_policy("openai:x,base_url=https://openrouter.ai/api/v1,api_key_env=MY_ROUTER_KEY")
    monkeypatch.setenv("MY_ROUTER_KEY", "k-123")
    policy = make_policy("openai:x,base_url=https://openrouter.ai/api/v1,api_key_env=MY_ROUTER_KEY,name=router")
    assert policy.provider == "openai:openrouter.ai" and policy.name == "router"
    assert "k-123" not in repr(vars(policy).get("spec"))


def test_providers_and_defaults(monkeypatch):
    monkeypatch.setattr(litellm_policy, "_litellm", lambda: None)  # its import takes seconds
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert make_policy("openai:gpt-4o-mini").provider == "openai:api.openai.com"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    assert make_policy("openai:local").provider == "openai:127.0.0.1:8000"
    lite = make_policy("litellm:anthropic/claude-3-5-haiku-latest,mode=json,obs=state,max_tokens=32")
    assert lite.provider == "litellm:anthropic"
    assert (lite.settings.mode, lite.settings.obs.value, lite.settings.max_new_tokens) == (Mode.JSON, "state", 32)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("openai:m,base_url=http://h/v1,colour=red", r"unknown parameter\(s\) colour \(allowed: .*temperature"),
        ("openai:m,base_url=http://h/v1,mode=xml", "mode must be one of text, tools, json"),
        ("local,parse=loose", r"parse must be one of strict, lenient \(or use parser=\), not 'loose'"),
        ("openai:m,base_url=http://h/v1,temperature=9", "temperature must be between 0 and 2"),
        ("local,temperature=5", "temperature must be between 0 and 2"),
        ("local,mode=choice,temperature=11", "temperature must be between 0 and 10 in mode=choice"),
        ("openai:m,base_url=http://h/v1,api_base=http://h", r"unknown parameter\(s\) api_base"),
        ("litellm:m,api_base=http://h", "PROVIDER/MODEL"),
        ("openai:,base_url=http://h/v1", "name the model"),
        ("local,timeout=3", r"unknown parameter\(s\) timeout"),
        ("local:foo", "takes no model name"),
        ("hf:", "name the model"),
    ],
)
def test_bad_specs_get_one_clear_line(spec, message):
    with pytest.raises(PolicySpecError, match=message) as err:
        make_policy(spec)
    assert "\n" not in str(err.value)


def test_a_choice_draw_may_run_hotter_than_token_sampling():
    """Self-play explores in choice mode at 5 (bench/strategy.py), and its checkpoints are
    registered with that temperature: the spec must be playable, and free-text turns of such a
    policy still sample at 1."""
    policy = make_policy("local,engine=hf,mode=choice,temperature=5")
    assert policy.choice_temperature == 5.0
    assert policy._sampling(seed=1).temperature == 1.0
