"""`arena serve-model`'s app over real HTTP on 127.0.0.1, driven by the official openai client."""

from __future__ import annotations

import json
from collections import Counter

import httpx
import openai
import pytest

from arena.llm.engines import open_engine
from serve_model.server import FaultConfig, create_app
from tests.local_server import serve_in_thread

pytestmark = pytest.mark.slow

MESSAGES = [
    {"role": "system", "content": "You play Tic-Tac-Toe as X."},
    {"role": "user", "content": "Board:\n1|2|3\n4|5|6\n7|8|9\nPick a free cell."},
]
MOVE_SCHEMA = {
    "type": "object",
    "properties": {"move": {"type": "string", "enum": ["1", "5", "9"]}},
    "required": ["move"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def base_url():
    app = create_app(open_engine("local", "hf"), served_name="local")
    with serve_in_thread(app) as root:
        yield f"{root}/v1"


@pytest.fixture()
def client(base_url):
    return openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0, timeout=60)


def test_models_lists_the_served_model(client):
    assert [m.id for m in client.models.list().data] == ["local"]


def test_chat_returns_text_and_usage(client):
    reply = client.chat.completions.create(model="local", messages=MESSAGES, max_tokens=5, temperature=0.7, seed=3)
    assert isinstance(reply.choices[0].message.content, str)
    assert reply.choices[0].finish_reason in {"stop", "length"}
    assert reply.usage.completion_tokens <= 5 and reply.usage.prompt_tokens > 10
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    data = reply.model_dump()  # the exact token ids ride along (vLLM's `return_token_ids` names)
    assert len(data["prompt_token_ids"]) == reply.usage.prompt_tokens
    assert len(data["choices"][0]["token_ids"]) == reply.usage.completion_tokens
    again = client.chat.completions.create(model="local", messages=MESSAGES, max_completion_tokens=5, temperature=0.7, seed=3)
    assert again.choices[0].message.content == reply.choices[0].message.content


def test_tool_call_picks_an_enum_value(client):
    tool = {"type": "function", "function": {"name": "play_move", "description": "Play a move", "parameters": MOVE_SCHEMA}}
    reply = client.chat.completions.create(
        model="local", messages=MESSAGES, tools=[tool], tool_choice={"type": "function", "function": {"name": "play_move"}}
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    (call,) = choice.message.tool_calls
    assert call.function.name == "play_move"
    assert json.loads(call.function.arguments)["move"] in {"1", "5", "9"}


def test_json_schema_and_json_object(client):
    reply = client.chat.completions.create(
        model="local", messages=MESSAGES,
        response_format={"type": "json_schema", "json_schema": {"name": "move", "schema": MOVE_SCHEMA, "strict": True}},
    )
    assert json.loads(reply.choices[0].message.content)["move"] in {"1", "5", "9"}
    reply = client.chat.completions.create(model="local", messages=MESSAGES, max_tokens=8, response_format={"type": "json_object"})
    assert isinstance(json.loads(reply.choices[0].message.content), dict)


def test_bad_requests_get_openai_errors(client):
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=MESSAGES)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="local", messages=MESSAGES, temperature=5)


def test_every_fault_kind_is_observed():
    faults = FaultConfig.parse("429=0.25,500=0.25,timeout=0.25,garbage=0.25", seed=11, hang_s=2.0)
    app = create_app(open_engine("local", "hf"), served_name="local", faults=faults)
    seen: Counter[str] = Counter()
    with serve_in_thread(app) as root:
        url = f"{root}/v1"
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=0.5)
        for _ in range(12):
            try:
                reply = client.chat.completions.create(model="local", messages=MESSAGES, max_tokens=3)
                seen["garbage"] += 1
                assert reply.choices[0].message.content  # garbage, but a well-formed 200
            except openai.RateLimitError as exc:
                assert exc.response.headers["retry-after"] == "1"
                seen["429"] += 1
            except openai.InternalServerError:
                seen["500"] += 1
            except openai.APITimeoutError:
                seen["timeout"] += 1
        assert set(seen) == {"429", "500", "timeout", "garbage"}, seen
        assert app.state.faults.counts == dict(seen)
        # A client that waits longer than the hang gets a real answer afterwards.
        slow = httpx.post(f"{url}/chat/completions", json={"model": "local", "messages": MESSAGES, "max_tokens": 2}, timeout=10)
        assert slow.status_code in {200, 429, 500}
