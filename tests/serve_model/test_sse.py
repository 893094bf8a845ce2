"""`arena serve-model`'s streamed replies, read back by the official openai client."""

from __future__ import annotations

import httpx
import openai

from serve_model.sse import completion_events

COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "local",
    "system_fingerprint": None,
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "I play [bet]"}, "finish_reason": "stop", "logprobs": None}],
    "usage": {"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34},
}


def _client(include_usage: bool) -> openai.OpenAI:
    body = b"".join(completion_events(COMPLETION, include_usage))
    transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body, headers={"content-type": "text/event-stream"}))
    return openai.OpenAI(api_key="unused", base_url="http://127.0.0.1:1/v1", http_client=httpx.Client(transport=transport))


def test_the_openai_client_assembles_the_same_message_from_the_stream() -> None:
    stream = _client(include_usage=True).chat.completions.create(
        model="local", messages=[{"role": "user", "content": "move"}], stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "I play [bet]"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 34


def test_usage_is_only_sent_when_asked_for() -> None:
    chunks = list(_client(include_usage=False).chat.completions.create(model="local", messages=[{"role": "user", "content": "x"}], stream=True))
    assert all(c.usage is None for c in chunks) and all(c.choices for c in chunks)
