"""`arena serve-env` throughput over WebSocket, as a ratio to the match driver in process.

Both sides play the same episodes: Tic-Tac-Toe, the measured seat against `bot`, the measured
seat always taking the first legal move, seeds 0..N-1.
- in process: `arena.match.play_match` with a first-legal-move policy, `--clients` matches in
  flight on one event loop;
- over WS: `arena serve-env` runs in a subprocess on 127.0.0.1; `--clients` concurrent clients
  (plain `websockets`, OpenEnv's message format) each reset and step through their share.
`steps_per_s` is one client's step messages per second (reset included), `ws_over_inprocess`
the episodes per second over WS with `--clients` clients divided by those in process. Medians of
`--rounds` rounds; the last line is JSON.

    .venv/bin/python -m bench.serve_env [--clients 32] [--episodes 256] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from arena.match import play_match
from arena.policy import MoveRequest, Policy, PolicyReply, make_policy
from games.registry import make_game

ROOT = Path(__file__).resolve().parents[1]


class FirstLegal(Policy):
    name = spec = "first-legal"

    async def act(self, request: MoveRequest) -> PolicyReply:
        move = request.legal_moves[0]
        return PolicyReply(action=move, raw=move)


async def in_process(episodes: int, clients: int) -> float:
    """Episodes per second through the match driver, `clients` matches in flight."""
    bot, me = make_policy("bot"), FirstLegal()
    queue = list(range(episodes))

    async def worker() -> None:
        while queue:
            seed = queue.pop()
            await play_match(make_game("tictactoe"), [me, bot], seed)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return episodes / (time.perf_counter() - start)


async def over_ws(url: str, episodes: int, clients: int) -> tuple[float, int]:
    """Episodes per second and messages sent, `clients` WebSocket sessions at once."""
    import websockets

    queue = list(range(episodes))
    messages = 0

    async def worker() -> None:
        nonlocal messages
        async with websockets.connect(url, max_size=None) as ws:
            while queue:
                seed = queue.pop()
                await ws.send(json.dumps({"type": "reset", "data": {"game": "tictactoe", "seed": seed, "opponents": ["bot"]}}))
                data = json.loads(await ws.recv())["data"]
                messages += 1
                while not data["done"]:
                    await ws.send(json.dumps({"type": "step", "data": {"move": data["observation"]["legal_moves"][0]}}))
                    data = json.loads(await ws.recv())["data"]
                    messages += 1
            await ws.send(json.dumps({"type": "close"}))

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return episodes / (time.perf_counter() - start), messages


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, max_sessions: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    server = subprocess.Popen(
        [sys.executable, "-m", "llm_arena_cli", "serve-env", "--port", str(port), "--max-sessions", str(max_sessions)],
        env=env, stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("serve-env did not start within 120 s")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--episodes", type=int, default=256)
    parser.add_argument("--single-episodes", type=int, default=64, help="episodes of the one-client run")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    port = free_port()
    server = start_server(port, max(args.clients, 1) + 1)
    url = f"ws://127.0.0.1:{port}/ws"
    try:
        await over_ws(url, 8, 1)  # warm-up: imports and first game construction on the server
        await in_process(8, 1)
        single, inproc, ws = [], [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            _eps, sent = await over_ws(url, args.single_episodes, 1)
            single.append(sent / (time.perf_counter() - start))
            inproc.append(await in_process(args.episodes, args.clients))
            ws.append((await over_ws(url, args.episodes, args.clients))[0])
            print(f"round: 1 client {single[-1]:.0f} steps/s; {args.clients} clients: WS {ws[-1]:.1f} episodes/s, "
                  f"in process {inproc[-1]:.1f} episodes/s", flush=True)
    finally:
        server.terminate()
        server.wait(10)
    figures = {
        "steps_per_s": round(statistics.median(single), 1),
        "ws_episodes_per_s": round(statistics.median(ws), 1),
        "inprocess_episodes_per_s": round(statistics.median(inproc), 1),
        "ws_over_inprocess": round(statistics.median(w / i for w, i in zip(ws, inproc)), 3),
        "clients": args.clients,
        "episodes": args.episodes,
        "rounds": args.rounds,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    asyncio.run(main())
