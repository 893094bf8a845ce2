"""The episode's moves as MCP tools (`make_move`, `legal_moves`, `rules`), the way openenv-core
0.3.x's MCP environments offer theirs.

OpenEnv reaches an environment's tools three ways, and the server answers all three:
- a WS /ws `step` whose action is `{"type": "list_tools"}` or
  `{"type": "call_tool", "tool_name": ..., "arguments": {...}}` (what openenv-core's
  `MCPToolClient` sends by default). The answer is an observation: `{"tools": [...]}`, or
  `{"tool_name", "result", "error"}` with the episode's reward and done beside it;
- a WS /ws `{"type": "mcp", "data": <JSON-RPC request>}` message, answered by
  `{"type": "mcp", "data": <JSON-RPC response>}`;
- POST /mcp (JSON-RPC, no session): `tools/list` only. The tools act on an episode, and only a WS
  session holds one, so a stateless `tools/call` gets an error that says where to call it.

A tool result has the shape of FastMCP's CallToolResult (`content`, `structured_content`, `data`,
`is_error`, `meta`), which is what OpenEnv's client unwraps (`data`). Tool failures (no episode,
a move after the end, bad arguments) are OpenEnv ToolErrors, not JSON-RPC errors: the session
stays open, as after any rejected message.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from arena.match import MAX_REPLY_CHARS
from arena.redaction import redact
from arena.seat_environment import SeatEnvironmentError

if TYPE_CHECKING:
    from serve_env.environment import ArenaEnvironment

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "make_move",
        "description": "Play your move for the player whose turn it is; the server's opponents then move until "
                       "it is your turn again. Returns your new observation with reward and done.",
        "input_schema": {
            "type": "object",
            "properties": {"move": {"type": "string", "maxLength": MAX_REPLY_CHARS,
                                    "description": "The move text, as the legal moves or the rules spell it"}},
            "required": ["move"],
            "additionalProperties": False,
        },
    },
    {
        "name": "legal_moves",
        "description": "The legal moves of the player whose turn it is (null when the game takes free-text moves "
                       "or the episode is over).",
        "input_schema": NO_ARGUMENTS,
    },
    {
        "name": "rules",
        "description": "The rules of the game being played.",
        "input_schema": NO_ARGUMENTS,
    },
]
TOOL_NAMES = frozenset(t["name"] for t in TOOLS)
MCP_STEP_TYPES = frozenset({"list_tools", "call_tool"})  # OpenEnv's ListToolsAction / CallToolAction

# JSON-RPC 2.0 error codes (OpenEnv's JsonRpcErrorCode)
INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32600, -32601, -32602


class ToolFailure(Exception):
    """A tool call that could not run; `kind` is OpenEnv's ToolErrorType value."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(redact(message))
        self.kind = kind


def listed_tools(*, camel_case: bool = False) -> list[dict[str, Any]]:
    """The tool specs: `input_schema` in OpenEnv's observations, `inputSchema` in JSON-RPC (as MCP)."""
    key = "inputSchema" if camel_case else "input_schema"
    return [{"name": t["name"], "description": t["description"], key: t["input_schema"]} for t in TOOLS]


async def call_tool(env: "ArenaEnvironment", name: Any, arguments: Any) -> tuple[Any, float, bool]:
    """Run one tool on the session's episode: (its data, the episode's reward, done)."""
    if name not in TOOL_NAMES:
        raise ToolFailure("tool_not_found", f"no tool {str(name)[:60]!r}; the tools are {', '.join(sorted(TOOL_NAMES))}")
    if not isinstance(arguments, dict):
        raise ToolFailure("invalid_args", f"{name}: arguments must be a JSON object")
    view = env.seat_environment.view()
    if env.seat_environment.game is None or view is None:
        raise ToolFailure("execution_error", f"{name}: no episode: send a reset first")
    if name == "make_move":
        extra = set(arguments) - {"move"}
        if extra or not isinstance(arguments.get("move"), str):
            raise ToolFailure("invalid_args", "make_move takes exactly one string argument, `move`")
        try:
            payload = await env.step({"move": arguments["move"]})
        except ValidationError:
            raise ToolFailure("invalid_args", f"make_move: `move` is over {MAX_REPLY_CHARS} characters") from None
        except SeatEnvironmentError as exc:
            raise ToolFailure("execution_error", f"make_move: {exc}") from None
        data = {**payload["observation"], "reward": payload["reward"], "done": payload["done"]}
        return data, payload["reward"], payload["done"]
    if arguments:
        raise ToolFailure("invalid_args", f"{name} takes no arguments")
    reward = float(view.reward or 0.0) if view.done else 0.0
    if name == "legal_moves":
        return view.legal_moves, reward, view.done
    return env.seat_environment.rules, reward, view.done


def tool_result(data: Any) -> dict[str, Any]:
    """FastMCP's CallToolResult, serialised as openenv-core's server sends it."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return {
        "content": [{"type": "text", "text": text}],
        "structured_content": {"result": data},
        "meta": None,
        "data": data,
        "is_error": False,
    }


async def step_observation(env: "ArenaEnvironment", action: dict[str, Any]) -> dict[str, Any]:
    """The observation payload answering a `list_tools` or `call_tool` step (OpenEnv's
    ListToolsObservation / CallToolObservation, serialised)."""
    view = env.seat_environment.view()
    done = bool(view is not None and view.done)
    reward = float(view.reward or 0.0) if view is not None and view.done else 0.0
    if action.get("type") == "list_tools":
        return {"observation": {"tools": listed_tools()}, "reward": reward, "done": done}
    name = action.get("tool_name")
    extra = set(action) - {"type", "tool_name", "arguments", "metadata"}
    try:
        if extra:
            raise ToolFailure("invalid_args", f"unknown call_tool field(s): {', '.join(sorted(map(str, extra)))[:200]}")
        data, reward, done = await call_tool(env, name, action.get("arguments", {}))
    except ToolFailure as exc:
        error = {"error_type": exc.kind, "message": str(exc)}
        return {"observation": {"tool_name": str(name)[:100], "result": None, "error": error}, "reward": reward, "done": done}
    return {"observation": {"tool_name": name, "result": tool_result(data), "error": None}, "reward": reward, "done": done}


async def jsonrpc(env: "ArenaEnvironment | None", request: Any) -> dict[str, Any]:
    """The JSON-RPC 2.0 response to one request. `env` is the WS session's environment, or None
    on the stateless POST /mcp."""
    request_id = request.get("id") if isinstance(request, dict) else None
    if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
        request_id = None
    if not isinstance(request, dict) or request.get("jsonrpc") != "2.0" or not isinstance(request.get("method"), str):
        return _error(request_id, INVALID_REQUEST, "Invalid Request: expected {\"jsonrpc\": \"2.0\", \"method\": ..., \"params\": {...}, \"id\": ...}")
    method, params = request["method"], request.get("params", {})
    if not isinstance(params, dict):
        return _error(request_id, INVALID_PARAMS, "params must be an object")
    if method == "tools/list":
        return {"jsonrpc": "2.0", "id": request_id, "result": {"tools": listed_tools(camel_case=True)}}
    if method != "tools/call":
        return _error(request_id, METHOD_NOT_FOUND, f"Method not found: {method[:100]} (tools/list, tools/call)")
    if env is None:
        return _error(request_id, INVALID_REQUEST, "tools act on an episode, and only a WS /ws session holds one: send "
                      "{\"type\": \"mcp\", \"data\": <this request>} over WS /ws after a reset")
    try:
        data, _reward, _done = await call_tool(env, params.get("name"), params.get("arguments", {}))
    except ToolFailure as exc:
        code = INVALID_PARAMS if exc.kind in ("tool_not_found", "invalid_args") else -32000
        return _error(request_id, code, str(exc), error_type=exc.kind)
    return {"jsonrpc": "2.0", "id": request_id, "result": tool_result(data)}


def _error(request_id: Any, code: int, message: str, **data: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": redact(message)}
    if data:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}
