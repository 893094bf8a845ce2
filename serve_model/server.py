"""An OpenAI-compatible HTTP front for a local engine (`arena serve-model`).

Enough of the Chat Completions API that the official `openai` client and LiteLLM (`openai/` prefix
with `api_base`) work unchanged: `POST /v1/chat/completions` and `GET /v1/models`.

The engine is any `arena.llm.engines.Engine`: vLLM (prefix caching, continuous batching, LoRA
requests) or the transformers batching engine. Enum choices are scored by the scoring engine the
command names (the engine itself where it can score; vLLM's is the hf engine of the same base).
Our own server over vLLM's engine, rather than vLLM's OpenAI server behind the command, keeps one
API for both engines: the same adapters by name, the same constrained choice for tools and JSON
schemas, the same fault injection, and the exact token ids of every reply.

- `model` selects the base model (the name it is served under) or a LoRA adapter (its path as
  given to `--adapter`, or that folder's name); `/v1/models` lists them all.
- Every reply carries the exact token ids: `prompt_token_ids` (the prompt as the model saw it)
  and `choices[0].token_ids` (the reply as sampled, end-of-turn included), named as vLLM's own
  server names them with `return_token_ids`.
- Sampling: temperature, top_p, max_tokens / max_completion_tokens, seed.
- Structured replies use the engine's constrained choice where the schema allows: a tool whose
  parameters have a string property with an `enum` (or a `response_format` json_schema with one) is
  answered by scoring every enum value as the reply and returning the most likely one as a proper
  `tool_calls` message (or JSON content). Without an enum, the model's free text is wrapped into
  the first string property. `{"type": "json_object"}` returns the first JSON object in the reply,
  else the reply wrapped as `{"text": ...}`.
- Limits (`ServeLimits`, each a flag of `arena serve-model`): a request body is capped in bytes
  (by default from the model's context), a prompt that does not fit the context with its
  `max_tokens` and a `max_tokens` above the cap are refused at once with 400 naming the limit,
  prompts are counted off the event loop, Host and Origin are checked (server_guards), JSON nested
  past 32 levels is refused, and `ARENA_SERVE_MODEL_KEY`, when set, is the bearer key every /v1
  request must carry (docs/serve-model.md#security).
- Fault injection for tests (`faults=`): a seeded fraction of requests gets a 429 with Retry-After,
  a 500, a hang longer than any sensible client timeout, or a 200 whose content is garbage.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import random
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from arena.llm.engines import CannotScore, Engine, Generation, PromptTooLong, SamplingParams
from arena.llm.engines.contract import adapter_key
from arena.llm.model import ModelNotAvailable
from arena.redaction import remember_secret
from serve_model.sse import completion_events
from server_guards.body_size import BoundedBodies
from server_guards.json_depth import BoundedJSONBodies
from server_guards.origins import HostAndOriginGuard, OriginPolicy

DEFAULT_MAX_TOKENS = 256
DEFAULT_MAX_TOKENS_CAP = 4096
API_KEY_ENV = "ARENA_SERVE_MODEL_KEY"
BYTES_PER_CONTEXT_TOKEN = 32  # a token is ~4 characters of text; room for JSON escapes and multi-byte text
MIN_REQUEST_BYTES = 64 * 1024


@dataclass(frozen=True)
class ServeLimits:
    """What one request may ask of the server (the flags of `arena serve-model`)."""

    max_tokens_cap: int = DEFAULT_MAX_TOKENS_CAP  # --max-tokens-cap: a larger max_tokens is refused, not lowered
    max_request_bytes: int | None = None  # --max-request-kb; None: sized from the model's context
    bind_host: str | None = None  # the address served on: its names pass the Host check (None: any Host)
    allowed_hosts: tuple[str, ...] = ()  # --allowed-host
    allowed_origins: tuple[str, ...] = ()  # --allow-origin

    def request_bytes(self, context_length: int) -> int:
        if self.max_request_bytes is not None:
            return self.max_request_bytes
        return max(MIN_REQUEST_BYTES, context_length * BYTES_PER_CONTEXT_TOKEN)
MAX_MESSAGES = 1000
MAX_CONTENT_CHARS = 200_000  # per message: requests are untrusted too
FAULT_KINDS = ("429", "500", "timeout", "garbage")


@dataclass
class FaultConfig:
    """Probabilities of each injected fault per request; at most one fault per request."""

    p429: float = 0.0
    p500: float = 0.0
    timeout: float = 0.0
    garbage: float = 0.0
    seed: int = 0
    hang_s: float = 120.0  # how long a "timeout" request hangs before answering
    retry_after_s: int = 1

    @classmethod
    def parse(cls, text: str, *, seed: int = 0, hang_s: float = 120.0) -> "FaultConfig":
        """Parse "429=0.1,500=0.1,timeout=0.05,garbage=0.1"; one error line names the bad part."""
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            kind, sep, number = part.partition("=")
            kind = kind.strip().lower()
            if not sep or kind not in FAULT_KINDS:
                raise ValueError(f"fault {part!r}: expected KIND=PROBABILITY with KIND one of {', '.join(FAULT_KINDS)}")
            try:
                p = float(number)
            except ValueError:
                raise ValueError(f"fault {part!r}: probability must be a number") from None
            if not 0 <= p <= 1:
                raise ValueError(f"fault {part!r}: probability must be between 0 and 1")
            values[kind] = p
        if sum(values.values()) > 1 + 1e-9:
            raise ValueError(f"fault probabilities add up to {sum(values.values()):g}, more than 1")
        return cls(
            p429=values.get("429", 0.0), p500=values.get("500", 0.0), timeout=values.get("timeout", 0.0),
            garbage=values.get("garbage", 0.0), seed=seed, hang_s=hang_s,
        )

    @classmethod
    def from_dict(cls, faults: dict[str, float], *, seed: int = 0, hang_s: float = 120.0) -> "FaultConfig":
        return cls.parse(",".join(f"{k}={v}" for k, v in faults.items()), seed=seed, hang_s=hang_s)

    @property
    def active(self) -> bool:
        return self.p429 + self.p500 + self.timeout + self.garbage > 0


class _FaultDraw:
    """A seeded, thread-safe sequence of fault decisions (None = serve normally)."""

    def __init__(self, config: FaultConfig):
        self.config = config
        self.rng = random.Random(config.seed)
        self.lock = threading.Lock()
        self.counts = {kind: 0 for kind in FAULT_KINDS}

    def next(self) -> str | None:
        c = self.config
        with self.lock:
            x = self.rng.random()
            for kind, p in (("429", c.p429), ("500", c.p500), ("timeout", c.timeout), ("garbage", c.garbage)):
                if x < p:
                    self.counts[kind] += 1
                    return kind
                x -= p
        return None


class ChatRequest(BaseModel):
    """The subset of the Chat Completions request we act on; unknown fields are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_MESSAGES)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    seed: int | None = None
    n: int | None = Field(default=None, ge=1)
    stream: bool | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None


class ApiError(Exception):
    def __init__(self, status: int, message: str, kind: str = "invalid_request_error", code: str | None = None, param: str | None = None):
        super().__init__(message)
        self.status, self.message, self.kind, self.code, self.param = status, message, kind, code, param


def _error_response(status: int, message: str, kind: str, code: str | None = None, param: str | None = None, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


def create_app(
    engine: Engine,
    *,
    served_name: str = "local",
    adapters: list[str] | None = None,
    faults: FaultConfig | dict[str, float] | None = None,
    fault_seed: int = 0,
    scorer: Engine | None = None,
    limits: ServeLimits | None = None,
) -> FastAPI:
    """A FastAPI app serving `engine` under `served_name`, plus the given LoRA adapters. Enum
    choices (tools, JSON schemas) are scored on `scorer` (default: `engine`, which must then be
    able to score); /health names both engines."""
    scorer = scorer or engine
    limits = limits or ServeLimits()
    api_key = os.environ.get(API_KEY_ENV) or None
    remember_secret(api_key)  # masked wherever it might be echoed (logs, errors)
    for path in adapters or []:
        engine.load_adapter(path)
        if scorer is not engine:
            scorer.load_adapter(path)
    if isinstance(faults, dict):
        faults = FaultConfig.from_dict(faults, seed=fault_seed)
    draw = _FaultDraw(faults) if faults is not None and faults.active else None
    created = int(time.time())
    routes: dict[str, str | None] = {served_name: None}  # model name -> adapter key (None = base)
    for path in adapters or []:
        key = adapter_key(path)
        routes.setdefault(path, key)
        routes.setdefault(key, key)
        routes.setdefault(Path(key).name, key)

    app = FastAPI(title="arena serve-model", version="1", docs_url="/docs")
    app.state.engine = engine
    app.state.faults = draw
    app.state.limits = limits
    context_length = int(getattr(engine, "context_length", 0) or 0)
    # Added innermost first: the Host/Origin guard answers before a byte of the body is read.
    app.add_middleware(BoundedJSONBodies)
    app.add_middleware(BoundedBodies, limit=limits.request_bytes(context_length), hint="--max-request-kb raises it")
    policy = (OriginPolicy.for_bind(limits.bind_host, hosts=limits.allowed_hosts, origins=limits.allowed_origins,
                                    origin_hint="--allow-origin adds one", host_hint="--allowed-host adds one")
              if limits.bind_host is not None else
              OriginPolicy(None, frozenset(limits.allowed_origins), origin_hint="--allow-origin adds one"))
    app.add_middleware(HostAndOriginGuard, policy=policy)

    if api_key is not None:
        app.add_middleware(BearerKey, key=api_key)

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _error_response(exc.status, exc.message, exc.kind, exc.code, exc.param)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        return _error_response(500, f"internal error: {type(exc).__name__}", "server_error")

    from fastapi.exceptions import RequestValidationError

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return _error_response(400, f"{where or 'request'}: {first.get('msg', 'invalid request')}", "invalid_request_error", param=where or None)

    @app.get("/v1/models")
    async def list_models() -> dict[str, Any]:
        names = [served_name] + [p for p in (adapters or [])]
        return {"object": "list", "data": [{"id": n, "object": "model", "created": created, "owned_by": "arena"} for n in names]}

    @app.get("/health")
    async def health() -> dict[str, Any]:
        report = {"status": "ok", **engine.health()}
        if scorer is not engine:
            report["scoring_engine"] = scorer.kind
        return report

    @app.post("/v1/chat/completions")
    async def chat_completions(body: ChatRequest, request: Request) -> Response:
        if body.model not in routes:
            raise ApiError(404, f"model {body.model!r} is not served here (served: {', '.join(sorted(routes))})", code="model_not_found", param="model")
        if (body.n or 1) != 1:
            raise ApiError(400, "only n=1 is supported", param="n")
        fault = draw.next() if draw is not None else None
        if fault == "429":
            retry = str(draw.config.retry_after_s)
            return _error_response(429, "rate limited (injected fault)", "rate_limit_error", "rate_limit_exceeded", headers={"Retry-After": retry})
        if fault == "500":
            return _error_response(500, "internal error (injected fault)", "server_error")
        if fault == "timeout":
            await asyncio.sleep(draw.config.hang_s)
        requested = body.max_completion_tokens or body.max_tokens or DEFAULT_MAX_TOKENS
        if requested > limits.max_tokens_cap:
            param = "max_completion_tokens" if body.max_completion_tokens else "max_tokens"
            raise ApiError(400, f"{param}={requested} is above this server's cap of {limits.max_tokens_cap} (--max-tokens-cap)", param=param)
        adapter = routes[body.model]
        messages = _normalise_messages(body.messages)
        # Counted on a worker thread: a long prompt's chat template and encoding must not
        # hold up /health and every other request on the event loop.
        prompt_tokens = await asyncio.to_thread(engine.count_tokens, messages)
        if context_length:
            asked = body.max_completion_tokens or body.max_tokens  # unasked: the engine fits its default to the room left
            if prompt_tokens + (asked or 1) > context_length:
                raise ApiError(400, f"the prompt's {prompt_tokens} tokens plus max_tokens {asked or 1} exceed the model's context of "
                                    f"{context_length} tokens", code="context_length_exceeded", param="messages")
        if fault == "garbage":  # a well-formed 200 whose content is nonsense; the model is not asked
            message, finish = {"role": "assistant", "content": _garbage(draw)}, "stop"
            return _completion(body, message, finish, Generation(message["content"], prompt_tokens, 0, finish))
        params = SamplingParams(
            temperature=1.0 if body.temperature is None else body.temperature,
            top_p=1.0 if body.top_p is None else body.top_p,
            max_new_tokens=requested,
            seed=body.seed,
        )
        try:
            answered = await _unless_client_leaves(request, _answer(engine, scorer, body, messages, params, adapter))
            if answered is None:  # nobody to answer; the engine stopped generating for it
                return Response(status_code=499)
            message, finish, generation = answered
        except PromptTooLong as exc:
            raise ApiError(400, str(exc), code="context_length_exceeded", param="messages") from None
        except ModelNotAvailable as exc:
            raise ApiError(404, str(exc), code="model_not_found", param="model") from None
        except CannotScore:
            raise ApiError(400, f"this server's {engine.kind} engine cannot score enum choices (tools, JSON schemas): "
                                "serve it with `arena serve-model`, which adds a scoring engine") from None
        except ValueError as exc:
            raise ApiError(400, str(exc)) from None
        return _completion(body, message, finish, generation)

    return app


class BearerKey:
    """Plain ASGI middleware (Starlette's BaseHTTPMiddleware would hide a client's disconnect from
    the route): every /v1 request must carry `Authorization: Bearer <key>`; /health stays open."""

    def __init__(self, app: Any, key: str) -> None:
        self.app, self.key = app, key.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith("/v1"):
            sent = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, token = sent.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(token.strip(), self.key):
                response = _error_response(401, f"missing or wrong bearer key (this server requires {API_KEY_ENV}'s value)",
                                           "invalid_request_error", code="invalid_api_key")
                return await response(scope, receive, send)
        await self.app(scope, receive, send)


DISCONNECT_POLL_S = 0.25


async def _unless_client_leaves(request: Request, work: Any) -> Any:
    """The result of the coroutine `work`, or None once the client has disconnected: the work is
    then cancelled, which cancels the engine's request (the hf engine stops that row at its next
    token), so a generation nobody waits for does not hold a core for minutes."""
    task = asyncio.ensure_future(work)

    async def client_gone() -> None:
        while not await request.is_disconnected():
            await asyncio.sleep(DISCONNECT_POLL_S)

    watcher = asyncio.ensure_future(client_gone())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
    if task.done():
        return task.result()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    return None


def _completion(body: ChatRequest, message: dict[str, Any], finish: str, generation: Generation) -> Response:
    """The reply as one JSON object, or as a stream of chunks when the request asked to stream."""
    completion = _completion_object(body.model, message, finish, generation)
    if body.stream:
        options = getattr(body, "stream_options", None)
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        return StreamingResponse(completion_events(completion, include_usage), media_type="text/event-stream")
    return JSONResponse(completion)


def _completion_object(model: str, message: dict[str, Any], finish: str, generation: Generation) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
    if generation.completion_ids is not None:
        choice["token_ids"] = list(generation.completion_ids)
    completion: dict[str, Any] = {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
        "choices": [choice],
        "usage": {
            "prompt_tokens": generation.prompt_tokens,
            "completion_tokens": generation.completion_tokens,
            "total_tokens": generation.prompt_tokens + generation.completion_tokens,
        },
    }
    if generation.prompt_ids is not None:
        completion["prompt_token_ids"] = list(generation.prompt_ids)
    return completion


def _normalise_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """OpenAI messages -> plain {role, content} strings the chat template understands."""
    out = []
    for i, m in enumerate(messages):
        role = m.get("role")
        if role not in {"system", "developer", "user", "assistant", "tool", "function"}:
            raise ApiError(400, f"messages[{i}].role: unknown role {role!r}", param=f"messages[{i}].role")
        content = m.get("content")
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") in {"text", "input_text"})
        content = "" if content is None else str(content)
        if role == "assistant" and m.get("tool_calls"):
            calls = [c.get("function", {}) for c in m["tool_calls"] if isinstance(c, dict)]
            content = (content + "\n" if content else "") + json.dumps(calls)[:MAX_CONTENT_CHARS]
        if role in {"tool", "function"}:
            role, content = "user", f"Tool result: {content}"
        if role == "developer":
            role = "system"
        out.append({"role": role, "content": content[:MAX_CONTENT_CHARS]})
    return out


def _enum_property(schema: Any) -> tuple[str, list[str]] | None:
    """The first (required first) string property of an object schema that lists an enum."""
    if not isinstance(schema, dict):
        return None
    props = schema.get("properties")
    if not isinstance(props, dict):
        return None
    required = [r for r in schema.get("required", []) if isinstance(r, str)]
    for name in required + [p for p in props if p not in required]:
        prop = props.get(name)
        if isinstance(prop, dict) and isinstance(prop.get("enum"), list) and prop["enum"]:
            if prop.get("type", "string") == "string" and all(isinstance(v, str) for v in prop["enum"]):
                return name, prop["enum"]
    return None


def _text_property(schema: Any) -> str:
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        for name, prop in schema["properties"].items():
            if isinstance(prop, dict) and prop.get("type") == "string":
                return name
    return "text"


async def _fill_schema(
    engine: Engine, scorer: Engine, schema: Any, messages: list[dict], params: SamplingParams, adapter: str | None
) -> tuple[dict[str, str], Generation]:
    enum = _enum_property(schema)
    if enum is not None:
        name, options = enum
        choice, generation = await scorer.choose(messages, options, adapter)
        return {name: choice}, generation
    generation = await engine.chat(messages, params, adapter)
    return {_text_property(schema): generation.text}, generation


def _pick_tool(body: ChatRequest) -> dict[str, Any] | None:
    tools = [t for t in body.tools or [] if isinstance(t, dict) and isinstance(t.get("function"), dict)]
    choice = body.tool_choice
    if not tools or choice == "none":
        return None
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
        for tool in tools:
            if tool["function"].get("name") == wanted:
                return tool["function"]
        raise ApiError(400, f"tool_choice names {wanted!r}, which is not among the tools", param="tool_choice")
    return tools[0]["function"]


async def _answer(
    engine: Engine, scorer: Engine, body: ChatRequest, messages: list[dict], params: SamplingParams, adapter: str | None
) -> tuple[dict[str, Any], str, Generation]:
    """The assistant message, its finish reason and the generation behind it (enum choices scored
    on `scorer`, free text generated on `engine`)."""
    tool = _pick_tool(body)
    if tool is not None and len([t for t in body.tools or [] if isinstance(t, dict)]) > 1 and not isinstance(body.tool_choice, dict):
        # several tools and free choice: let the model pick the tool by name first
        names = [t["function"]["name"] for t in body.tools if isinstance(t, dict) and isinstance(t.get("function"), dict)]
        picked, _ = await scorer.choose(messages, names, adapter)
        tool = next(t["function"] for t in body.tools if isinstance(t, dict) and t.get("function", {}).get("name") == picked)
    if tool is not None:
        arguments, generation = await _fill_schema(engine, scorer, tool.get("parameters"), messages, params, adapter)
        call = {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function", "function": {"name": str(tool.get("name", "")), "arguments": json.dumps(arguments)}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls", generation
    fmt = body.response_format or {}
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        obj, generation = await _fill_schema(engine, scorer, spec.get("schema"), messages, params, adapter)
        return {"role": "assistant", "content": json.dumps(obj)}, "stop", generation
    generation = await engine.chat(messages, params, adapter)
    content = generation.text
    if fmt.get("type") == "json_object":
        content = json.dumps(_first_json_object(content) or {"text": content})
    return {"role": "assistant", "content": content}, generation.finish_reason, generation


def _first_json_object(text: str) -> dict[str, Any] | None:
    decoder = json.JSONDecoder()
    for start in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, _ = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _garbage(draw: _FaultDraw) -> str:
    with draw.lock:
        rng = random.Random(draw.rng.random())
    alphabet = "{}[]<>#@%&*~^|\\/$;:\"'`=+\u00bf\u00a7\ufffd0123456789abcdefXYZ "
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(5, 80)))
