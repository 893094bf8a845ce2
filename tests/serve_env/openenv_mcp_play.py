"""Plays episodes against `arena serve-env` through its MCP tools with openenv-core's own,
unmodified MCPToolClient (which calls tools as WS /ws `list_tools` / `call_tool` steps).

Run by tests/serve_env/test_mcp_tools.py in the openenv-core venv. argv: server URL, then a JSON list
of reset data. Prints one JSON list: per episode the tool names, the rules, each make_move result
and the errors the client raised (a bad move's feedback, a move after the end, an unknown tool).
"""

import asyncio
import json
import sys

from openenv.core.mcp_client import MCPToolClient


async def play(url: str, reset: dict) -> dict:
    out: dict = {"moves": [], "errors": []}
    async with MCPToolClient(base_url=url) as env:
        await env.reset(**reset)
        out["tools"] = sorted(tool.name for tool in await env.list_tools())
        out["rules"] = await env.call_tool("rules")
        out["moves"].append(await env.call_tool("make_move", move="not a move at all"))
        while not out["moves"][-1]["done"]:
            legal = await env.call_tool("legal_moves")
            out["moves"].append(await env.call_tool("make_move", move=legal[0]))
        out["legal_after_end"] = await env.call_tool("legal_moves")
        for name, arguments in (("make_move", {"move": "0"}), ("resign", {}), ("make_move", {"mv": "0"})):
            try:
                await env.call_tool(name, **arguments)
            except RuntimeError as exc:
                out["errors"].append(str(exc))
    return out


async def main() -> None:
    url, resets = sys.argv[1], json.loads(sys.argv[2])
    results = []
    for reset in resets:
        try:
            results.append(await play(url, reset))
        except Exception as exc:
            results.append({"failed": f"{type(exc).__name__}: {exc}"})
    print(json.dumps(results))


asyncio.run(main())
