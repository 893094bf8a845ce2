"""A finished chat completion as an OpenAI-style stream (server-sent events).

Clients that always stream (verifiers' chat program, many agent SDKs) can then use
`arena serve-model`. The engine batches whole generations, so the stream carries the full reply
in one content chunk, then the finish reason, then usage when asked for, then `[DONE]`: the same
frames the official client assembles into the same message it would get without streaming."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def _event(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def completion_events(completion: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
    """The SSE frames of `completion` (a `chat.completion` object with one choice)."""
    head = {k: completion[k] for k in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"
    choice = completion["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
    usage_field = {"usage": None} if include_usage else {}
    yield _event({**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}], **usage_field})
    yield _event({**head, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": choice["finish_reason"]}], **usage_field})
    if include_usage:
        yield _event({**head, "choices": [], "usage": completion["usage"]})
    yield _event("[DONE]")
