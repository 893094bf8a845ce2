"""serve-model's limits (issue 56 finding 3): each refusal comes at once, as one OpenAI-shaped error
naming the limit, before the model is asked; the bearer key when the operator sets one; Host,
Origin and JSON depth as on every server. A fake engine stands in: nothing here generates."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from fastapi.testclient import TestClient

from arena.llm.engines import Generation
from serve_model.server import API_KEY_ENV, ServeLimits, create_app

CONTEXT = 512
MESSAGES = [{"role": "user", "content": "Pick a cell."}]


class CountingEngine:
    """Enough of the engine contract for the server: tokens are characters, replies are fixed."""

    kind = "fake"
    context_length = CONTEXT

    def __init__(self) -> None:
        self.chats = 0

    def count_tokens(self, messages: list[dict]) -> int:
        return sum(len(m["content"]) for m in messages)

    async def chat(self, messages, params, adapter=None) -> Generation:
        self.chats += 1
        return Generation("5", self.count_tokens(messages), 1, "stop")

    def health(self) -> dict:
        return {"engine": "fake"}

    def load_adapter(self, path: str) -> None:
        raise AssertionError("no adapters here")


@pytest.fixture()
def engine() -> CountingEngine:
    return CountingEngine()


def _client(engine: CountingEngine, **limits) -> TestClient:
    return TestClient(create_app(engine, limits=ServeLimits(**limits)), base_url="http://127.0.0.1:8000")


def _chat(client: TestClient, **body):
    return client.post("/v1/chat/completions", json={"model": "local", "messages": MESSAGES, **body})


def test_max_tokens_above_the_cap_is_refused_not_lowered(engine):
    client = _client(engine, max_tokens_cap=64)
    refused = _chat(client, max_tokens=10**9)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert "cap of 64" in error["message"] and "--max-tokens-cap" in error["message"] and error["param"] == "max_tokens"
    assert _chat(client, max_tokens=64).status_code == 200
    assert engine.chats == 1


def test_a_prompt_past_the_context_is_refused_before_the_model_is_asked(engine):
    client = _client(engine)
    long = [{"role": "user", "content": "x" * (CONTEXT - 10)}]
    refused = client.post("/v1/chat/completions", json={"model": "local", "messages": long, "max_tokens": 20})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "context_length_exceeded"
    assert f"context of {CONTEXT} tokens" in refused.json()["error"]["message"]
    ok = client.post("/v1/chat/completions", json={"model": "local", "messages": long})  # unasked: the room left
    assert ok.status_code == 200
    assert engine.chats == 1


def test_a_large_body_is_refused_at_once_from_the_context(engine):
    client = _client(engine)  # 512 tokens of context: the floor of 64 KiB
    huge = {"model": "local", "messages": [{"role": "user", "content": "x" * 20_000_000}]}
    start = time.perf_counter()
    refused = client.post("/v1/chat/completions", json=huge)
    assert refused.status_code == 413 and "--max-request-kb" in refused.json()["detail"]
    assert time.perf_counter() - start < 5 and engine.chats == 0
    assert ServeLimits().request_bytes(8192) == 8192 * 32 and ServeLimits(max_request_bytes=10).request_bytes(8192) == 10


def test_nested_json_is_a_400(engine):
    deep = '{"model": "local", "messages": ' + "[" * 5000 + "]" * 5000 + "}"
    refused = _client(engine).post("/v1/chat/completions", content=deep, headers={"content-type": "application/json"})
    assert refused.status_code == 400 and "nested" in refused.json()["detail"]


def test_host_and_origin_are_checked(engine):
    client = _client(engine, bind_host="127.0.0.1")
    assert _chat(client).status_code == 200
    rebound = TestClient(client.app, base_url="http://evil.example:8000")
    assert rebound.get("/v1/models").status_code == 403
    assert _chat(client, **{}).status_code == 200
    cross = client.post("/v1/chat/completions", json={"model": "local", "messages": MESSAGES}, headers={"origin": "http://evil.example"})
    assert cross.status_code == 403 and "--allow-origin" in cross.json()["detail"]


def test_the_bearer_key_when_set(engine, monkeypatch):
    monkeypatch.setenv(API_KEY_ENV, "s3cret-key-for-tests")
    client = _client(engine)
    missing = _chat(client)
    assert missing.status_code == 401 and missing.json()["error"]["code"] == "invalid_api_key"
    assert "s3cret" not in missing.text
    wrong = client.post("/v1/chat/completions", json={"model": "local", "messages": MESSAGES}, headers={"authorization": "Bearer nope"})
    assert wrong.status_code == 401
    right = client.post("/v1/chat/completions", json={"model": "local", "messages": MESSAGES},
                        headers={"authorization": "Bearer s3cret-key-for-tests"})
    assert right.status_code == 200
    assert client.get("/health").status_code == 200  # probes need no key


class HangingEngine(CountingEngine):
    """A generation that never ends by itself: it waits to be cancelled, as the engines' futures do."""

    def __init__(self) -> None:
        super().__init__()
        self.cancelled = asyncio.Event()

    async def chat(self, messages, params, adapter=None) -> Generation:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise


async def test_a_client_that_leaves_cancels_its_generation():
    engine = HangingEngine()
    app = create_app(engine)
    body = json.dumps({"model": "local", "messages": MESSAGES, "max_tokens": 8}).encode()
    sent = [{"type": "http.request", "body": body, "more_body": False}]
    left = asyncio.Event()

    async def receive() -> dict:
        if sent:
            return sent.pop()
        await left.wait()
        return {"type": "http.disconnect"}

    statuses: list[int] = []

    async def send(message: dict) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
             "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"", "root_path": "",
             "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
             "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}
    served = asyncio.create_task(app(scope, receive, send))
    await asyncio.sleep(0.3)
    assert not engine.cancelled.is_set()  # still generating while the client waits
    left.set()
    await asyncio.wait_for(engine.cancelled.wait(), 2.0)
    await asyncio.wait_for(served, 2.0)


def test_the_hf_row_budget_stops_rows_whose_caller_left():
    import torch

    from arena.llm.engines.hf import _RowBudget

    loop = asyncio.new_event_loop()
    try:
        futures = [loop.create_future(), loop.create_future()]
        budget = _RowBudget(prompt_len=3, budgets=[100, 100], device="cpu", futures=futures)
        ids = torch.zeros((2, 5), dtype=torch.long)
        assert budget(ids, torch.zeros(2, 4)).tolist() == [False, False]
        futures[1].cancel()
        assert budget(ids, torch.zeros(2, 4)).tolist() == [False, True]
    finally:
        loop.close()
