"""The FastAPI app of `arena serve-env`: OpenEnv's HTTP and WebSocket protocol over ArenaEnvironment.

We speak openenv-core 0.3.x's wire protocol rather than import its server: openenv-core pulls in
gradio and fastmcp (and would downgrade pillow in our venv) to serve a WebSocket loop we can write
in a page. Compatibility is tested against openenv-core's own unmodified client and validator.

As in OpenEnv, only WS /ws keeps a session: POST /reset and GET /state each answer from a fresh
environment, and POST /step, which has no episode to step, says to use /ws.

What a client can send is bounded (docs/openenv.md, "Security"): Host and Origin are checked
(server_guards.origins), sessions are capped in all and per client address, and a stateless reset
holds a slot while it runs; messages, JSON nesting and every reply are capped; game code runs off
the event loop with a deadline per call (arena.seat_environment).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena.redaction import install_log_redaction, redact
from server_guards.client_slots import ClientSlots, client_address
from server_guards.json_depth import BoundedJSONBodies, JSONTooDeep, loads_bounded
from server_guards.origins import HostAndOriginGuard, OriginPolicy
from arena.seat_environment import SeatEnvironmentError
from server_guards.body_size import BoundedBodies
from serve_env.environment import ArenaEnvironment, ServeConfig
from serve_env.mcp import MCP_STEP_TYPES, jsonrpc, step_observation
from serve_env.protocol import ErrorCode, GameAction, GameObservation, GameState, error_payload

log = logging.getLogger(__name__)
API_VERSION = "0.3.0"  # the openenv-core protocol version this server speaks


class StepRequest(BaseModel):
    model_config = ConfigDict(extra="allow")
    action: dict[str, Any] = Field(description="A GameAction: {\"move\": \"4\"}")


def build_app(config: ServeConfig) -> FastAPI:
    install_log_redaction()  # served by uvicorn directly too, not only through `arena serve-env`
    app = FastAPI(title="LLM Arena games (OpenEnv)", version=API_VERSION,
                  description="Every playable game of this arena as an OpenEnv environment. Sessions live on WS /ws.")
    active: set[ArenaEnvironment] = set()
    app.state.active_sessions = active
    slots = ClientSlots(config.max_sessions, config.max_sessions_per_client,
                        total_hint="the server's --max-sessions", per_client_hint="the server's --max-sessions-per-client")
    app.state.slots = slots
    pool = config.opponent_pool()
    app.router.on_shutdown.append(pool.close)

    @app.exception_handler(SeatEnvironmentError)
    async def seat_environment_error(_request: Request, exc: SeatEnvironmentError) -> JSONResponse:
        return JSONResponse({"detail": redact(exc)}, status_code=400)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "healthy"}

    @app.get("/metadata")
    async def metadata() -> dict[str, Any]:
        return {
            "name": "llm-arena",
            "description": "Seeded multi-agent text games (native and TextArena); the server plays the other seats "
                           "with the policies a reset names, or the client plays every seat (hot-seat).",
            "version": API_VERSION,
            "default_game": config.game,
            "allowed_policy_kinds": sorted(config.allowed_kinds),
            "supports_concurrent_sessions": True,
            "max_concurrent_envs": config.max_sessions,
            "session_timeout": config.idle_timeout,
            "max_message_bytes": config.max_message_bytes,
            "max_sessions_per_client": config.max_sessions_per_client,
            "max_reply_bytes": config.max_reply_bytes,
            "game_call_timeout": config.game_call_timeout,
            "documentation_url": "docs/openenv.md",
        }

    @app.get("/schema")
    async def schema() -> dict[str, Any]:
        from serve_env.protocol import ResetParams

        return {
            "action": GameAction.model_json_schema(),
            "observation": GameObservation.model_json_schema(),
            "state": GameState.model_json_schema(),
            "reset": ResetParams.model_json_schema(),
        }

    @app.post("/reset")
    async def reset(request: Request, body: dict[str, Any] | None = None) -> dict[str, Any]:
        # Stateless, yet it runs a game: it holds a session slot while it does.
        client = client_address(request)
        refused = slots.take(client)
        if refused:
            return JSONResponse({"detail": refused}, status_code=429)  # type: ignore[return-value]
        env = ArenaEnvironment(config, pool)
        try:
            payload = await env.reset(body or {})
        except ValidationError as exc:
            return JSONResponse({"detail": _errors(exc)}, status_code=422)  # type: ignore[return-value]
        finally:
            await env.close()
            slots.give_back(client)
        too_big = _reply_refusal(len(json.dumps(payload, ensure_ascii=False).encode()), config)
        if too_big:
            return JSONResponse({"detail": too_big}, status_code=400)  # type: ignore[return-value]
        return payload

    @app.post("/step")
    async def step(body: StepRequest) -> dict[str, Any]:
        raise SeatEnvironmentError("POST /step has no episode to step: as in OpenEnv, HTTP calls are stateless; play episodes over WS /ws")

    @app.get("/state")
    async def state() -> dict[str, Any]:
        return ArenaEnvironment(config, pool).state()  # no session: an empty episode

    @app.post("/mcp")
    async def mcp(request: Request) -> dict[str, Any]:
        # Stateless, as in OpenEnv: tools/list answers here; tools/call needs a WS session (serve_env.mcp).
        try:
            body = loads_bounded(await request.body())
        except JSONTooDeep as exc:
            return JSONResponse({"detail": str(exc)}, status_code=400)  # type: ignore[return-value]
        except ValueError:
            body = None
        return await jsonrpc(None, body)

    @app.websocket("/ws")
    async def websocket_session(websocket: WebSocket) -> None:
        await websocket.accept()
        client = client_address(websocket)
        refused = slots.take(client)
        if refused:
            await websocket.send_text(json.dumps(error_payload(
                refused, ErrorCode.CAPACITY_REACHED, active_sessions=slots.in_use, max_sessions=config.max_sessions,
                max_sessions_per_client=config.max_sessions_per_client)))
            await websocket.close()
            return
        env = ArenaEnvironment(config, pool)
        active.add(env)
        try:
            await _serve(websocket, env, config)
        except WebSocketDisconnect:
            pass
        finally:
            active.discard(env)
            slots.give_back(client)
            await env.close()
            try:
                await websocket.close()
            except (RuntimeError, WebSocketDisconnect):
                pass  # already closed by the client

    app.add_middleware(BoundedJSONBodies, max_bytes=config.max_message_bytes)
    app.add_middleware(BoundedBodies, limit=config.max_message_bytes)
    policy = OriginPolicy.for_bind(config.bind_host, hosts=config.allowed_hosts, origins=config.allowed_origins,
                                   origin_hint="the server's --allow-origin adds one", host_hint="the server's --allowed-host adds one")
    app.add_middleware(HostAndOriginGuard, policy=policy)  # added last: it runs first
    return app


def _reply_refusal(size: int, config: ServeConfig) -> str | None:
    if size <= config.max_reply_bytes:
        return None
    return f"a reply of {size} bytes is over the server's --max-reply-kb={config.max_reply_bytes // 1024}: episode ended"


async def _serve(websocket: WebSocket, env: ArenaEnvironment, config: ServeConfig) -> None:
    while True:
        try:
            async with asyncio.timeout(config.idle_timeout):  # a timer handle, not a task per message as wait_for makes
                message = await websocket.receive()
        except TimeoutError:
            await websocket.send_text(json.dumps(error_payload(
                f"session closed after {config.idle_timeout:g}s without a message", ErrorCode.SESSION_ERROR)))
            return
        if message["type"] == "websocket.disconnect":
            return
        raw = message.get("text")
        if raw is None:
            raw = (message.get("bytes") or b"").decode("utf-8", errors="replace")
        if len(raw.encode("utf-8")) > config.max_message_bytes:
            await websocket.send_text(json.dumps(error_payload(
                f"message over {config.max_message_bytes} bytes", ErrorCode.VALIDATION_ERROR)))
            continue
        reply = await _answer(env, raw)
        if reply is None:
            return
        text = json.dumps(reply, ensure_ascii=False)
        too_big = _reply_refusal(len(text.encode()), config)
        if too_big:  # the session ends: its episode cannot be shown to the client
            await websocket.send_text(json.dumps(error_payload(too_big, ErrorCode.EXECUTION_ERROR)))
            return
        await websocket.send_text(text)


async def _answer(env: ArenaEnvironment, raw: str) -> dict[str, Any] | None:
    """The reply to one WS message, or None for `close`."""
    try:
        message = loads_bounded(raw)
    except JSONTooDeep as exc:
        return error_payload(str(exc), ErrorCode.INVALID_JSON)
    except json.JSONDecodeError as exc:
        return error_payload(f"Invalid JSON: {exc}", ErrorCode.INVALID_JSON)
    if not isinstance(message, dict):
        return error_payload("a message is a JSON object with a `type`", ErrorCode.INVALID_JSON)
    kind = message.get("type")
    data = message.get("data") if message.get("data") is not None else {}
    try:
        if kind == "reset":
            return {"type": "observation", "data": await env.reset(_object(data, "reset"))}
        if kind == "step":
            data = _object(data, "step")
            if data.get("type") in MCP_STEP_TYPES:  # OpenEnv's ListToolsAction / CallToolAction
                return {"type": "observation", "data": await step_observation(env, data)}
            return {"type": "observation", "data": await env.step(data)}
        if kind == "state":
            return {"type": "state", "data": env.state()}
        if kind == "close":
            return None
        if kind == "mcp":
            return {"type": "mcp", "data": await jsonrpc(env, data)}
        return error_payload(f"Unknown message type: {str(kind)[:50]} (reset, step, state, close, mcp)", ErrorCode.UNKNOWN_TYPE)
    except ValidationError as exc:
        return error_payload(f"Invalid {kind} data: {_errors(exc)}", ErrorCode.VALIDATION_ERROR, errors=json.loads(exc.json(include_url=False, include_input=False)))
    except SeatEnvironmentError as exc:
        return error_payload(str(exc), ErrorCode.EXECUTION_ERROR)
    except Exception as exc:  # a bug must cost one answer, not every session on the server
        log.exception("serve-env: %s message failed", kind)  # the record's traceback is redacted (arena.redaction)
        return error_payload(redact(f"internal error: {type(exc).__name__}: {exc}")[:500], ErrorCode.EXECUTION_ERROR)


def _object(data: Any, kind: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise SeatEnvironmentError(f"{kind} data must be a JSON object, not {type(data).__name__}")
    return data


def _errors(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'data'}: {e['msg']}" for e in exc.errors())[:1000]
