"""Plays episodes against `arena serve-env` with openenv-core's own, unmodified GenericEnvClient.

Run by tests/serve_env/test_serve_env.py in a separate venv that has openenv-core (it is not a project
dependency). argv: server URL, then a JSON list of episodes {"reset": {...}, "pick": "first"|"last",
"bad_first": bool}. Prints one JSON list: each episode's observations, rewards and dones, and the
errors the client raised, in order.
"""

import asyncio
import json
import sys

from openenv.core import GenericEnvClient


async def play(url: str, episode: dict) -> dict:
    out: dict = {"steps": [], "errors": []}
    async with GenericEnvClient(base_url=url) as env:
        result = await env.reset(**episode["reset"])
        out["steps"].append({"observation": result.observation, "reward": result.reward, "done": result.done})
        if episode.get("bad_first"):
            result = await env.step({"move": "not a move at all"})
            out["steps"].append({"observation": result.observation, "reward": result.reward, "done": result.done})
        while not result.done:
            legal = result.observation["legal_moves"]
            move = legal[0] if episode.get("pick", "first") == "first" else legal[-1]
            result = await env.step({"move": move})
            out["steps"].append({"observation": result.observation, "reward": result.reward, "done": result.done})
        out["state"] = await env.state()
        try:
            await env.step({"move": "0"})
        except Exception as exc:  # the client raises on the server's error message
            out["errors"].append(str(exc))
    return out


async def main() -> None:
    url, episodes = sys.argv[1], json.loads(sys.argv[2])
    results = []
    for episode in episodes:
        try:
            results.append(await play(url, episode))
        except Exception as exc:
            results.append({"failed": f"{type(exc).__name__}: {exc}"})
    print(json.dumps(results))


asyncio.run(main())
