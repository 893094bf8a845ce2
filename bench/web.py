"""Leaderboard page throughput and p95 latency with 100,000 stored matches, as a ratio to a trivial
endpoint (/healthz) of the same server, measured side by side in one run.

Building the store fast (a real league of 100,000 bot matches takes far too long on 2 cores):
1. a pool of REAL matches is played with the match driver (arena.match.play_match, scripted bots
   and random movers) for each game, giving realistic turn records;
2. 100,000 match rows are bulk-inserted through the store's own models (league.db.MatchRow /
   TurnRow, `session.execute(insert(Model), rows)` in chunks): each row takes a pooled record's
   turns, with seats drawn from 20 policies and the outcome drawn from a hidden strength per
   policy (so the ratings have something to find);
3. rating snapshots are derived from that log with the league's own code: the live TrueSkill/Elo
   curves folded by league.ratings.OnlineRatings (league.runner.live_snapshot_rows) at 20
   checkpoints, and the final Bradley-Terry standings with a bootstrap CI (league.ratings.leaderboard),
   written with Store.replace_snapshots. (`arena league rerate` would refit every checkpoint from
   scratch, which is minutes at this size.)

Then `arena web`'s app runs under uvicorn on 127.0.0.1 in a subprocess, and 32 concurrent
httpx.AsyncClient workers (one client and keep-alive connection each) hammer /healthz and / (the
leaderboard) in alternating rounds; the medians over rounds are compared. A second server with
--refresh 0 (the data version checked on every request) is measured the same way. Last, both
endpoints are timed in process through ASGI (no sockets): the server's own cost per request,
independent of the load generator, which on a small machine is itself a bottleneck.

    .venv/bin/python -m bench.web [--matches 100000] [--clients 32] [--seconds 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

from sqlalchemy import func, insert, select

from arena.match import play_match
from arena.policy import make_policy
from games.registry import make_game
from league.db import FINISHED, MatchRow, TurnRow, utcnow
from league.ratings import OnlineRatings, leaderboard
from league.results import GameResult
from league.runner import live_snapshot_rows
from league.snapshots import checkpoints
from league.store import Store

ROOT = Path(__file__).resolve().parents[1]

GAMES = ("tictactoe", "connect_four", "nim")
POLICIES = 20
POOL_PER_GAME = 40
CHUNK = 5000


async def _record_pool(seed: int) -> dict[str, list]:
    """Real matches per game (bot vs random movers), whose turns the bulk rows reuse."""
    pool: dict[str, list] = {}
    movers = [make_policy("bot"), make_policy("random")]
    for game_id in GAMES:
        pool[game_id] = []
        for i in range(POOL_PER_GAME):
            seats = [movers[i % 2], movers[(i + 1) % 2]]
            record = await play_match(make_game(game_id, 2), seats, seed + i, match_id=f"pool-{game_id}-{i}")
            pool[game_id].append(record)
    return pool


def build_store(url: str, matches: int, seed: int = 0) -> dict[str, float]:
    started = time.perf_counter()
    store = Store(url)
    league_id = store.open_league("bench-web", {"note": "bulk-inserted by bench/web.py"})
    names = [f"policy-{i:02d}" for i in range(POLICIES)]
    for name in names:
        store.upsert_policy(name, "random")
    for game_id in GAMES:
        info = make_game(game_id, 2)
        store.upsert_game(game_id, info.name, info.rules)
    pool = asyncio.run(_record_pool(seed))
    rng = random.Random(seed)
    strength = {name: rng.gauss(0.0, 1.0) for name in names}
    now = utcnow()
    results: list[GameResult] = []
    with store.session() as s:
        next_id = (s.scalar(select(func.max(MatchRow.id))) or 0) + 1
    for start in range(0, matches, CHUNK):
        match_rows, turn_rows = [], []
        for k in range(start, min(matches, start + CHUNK)):
            game_id = GAMES[k % len(GAMES)]
            a, b = rng.sample(names, 2)
            template = pool[game_id][k % POOL_PER_GAME]
            p_a = 1.0 / (1.0 + math.exp(strength[b] - strength[a]))
            draw = rng.random() < 0.1
            ranks = [1, 1] if draw else ([1, 2] if rng.random() < p_a else [2, 1])
            match_id = next_id + k
            finished_at = now.replace(microsecond=0) - timedelta(seconds=matches - k)
            match_rows.append({
                "id": match_id, "league_id": league_id, "key": f"bulk:{k}", "game_id": game_id, "seed": k, "seats": [a, b],
                "status": FINISHED, "outcome": {"ranks": ranks, "scores": [float(2 - r) for r in ranks], "reason": "bulk"},
                "reason": "bulk", "attempts": 1, "scheduled_at": finished_at, "started_at": finished_at, "finished_at": finished_at,
                "duration_s": template.duration_s, "specs": ["random", "random"], "game_options": {}, "final_views": template.final_views,
            })
            for turn in template.turns:
                row = asdict(turn)
                row["policy"] = (a, b)[turn.player]
                row["match_id"] = match_id
                turn_rows.append(row)
            results.append(GameResult(str(match_id), game_id, (a, b), tuple(ranks)))
        with store.session() as s, s.begin():
            s.execute(insert(MatchRow), match_rows)
            s.execute(insert(TurnRow), turn_rows)
    inserted = time.perf_counter()
    rows: list[dict] = []
    ratings = OnlineRatings(systems=("trueskill", "elo"))
    marks = set(checkpoints(len(results)))
    per_game: Counter[str] = Counter()
    for n, result in enumerate(results, start=1):
        ratings.fold(result)
        per_game[result.game_id] += 1
        if n in marks:
            rows += live_snapshot_rows(ratings, n, per_game)
    after_by_scope = {"": len(results), **per_game}
    for game in ["", *GAMES]:
        scoped = results if not game else [r for r in results if r.game_id == game]
        for row in leaderboard(scoped, by="bt", bootstrap=50):
            rows.append({"game_id": game, "system": "bt", "after_matches": after_by_scope[game], "policy": row.policy,
                         "rating": row.rating, "lo": row.lo, "hi": row.hi, "rank": row.rank, "games": row.games})
    store.replace_snapshots(league_id, rows)
    store.close()
    return {"insert_s": inserted - started, "snapshots_s": time.perf_counter() - inserted, "snapshot_rows": len(rows)}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(url: str, refresh: float) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    code = (
        "import uvicorn; from web.app import create_app; "
        f"uvicorn.run(create_app({url!r}, refresh_s={refresh}), host='127.0.0.1', port={port}, log_level='warning', access_log=False)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=str(ROOT))
    base = f"http://127.0.0.1:{port}"
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/healthz", timeout=1).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the web server did not start")


async def hammer(base: str, path: str, clients: int, seconds: float) -> dict[str, float]:
    """`clients` workers, each with its own keep-alive connection (one httpx.AsyncClient per
    worker: a single client's shared pool of 32 connections is itself the bottleneck on 2 cores),
    sending requests back to back for `seconds`."""
    import httpx

    latencies: list[float] = []
    errors = 0
    sessions = [httpx.AsyncClient(base_url=base, timeout=60, limits=httpx.Limits(max_connections=1)) for _ in range(clients)]
    try:
        await asyncio.gather(*(s.get("/healthz") for s in sessions))  # open the connections first
        stop_at = time.perf_counter() + seconds

        async def worker(client: httpx.AsyncClient) -> None:
            nonlocal errors
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                response = await client.get(path)
                latencies.append(time.perf_counter() - t0)
                if response.status_code != 200:
                    errors += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker(s) for s in sessions))
        elapsed = time.perf_counter() - started
    finally:
        await asyncio.gather(*(s.aclose() for s in sessions))
    latencies.sort()
    return {"rps": len(latencies) / elapsed, "p95_ms": 1000 * latencies[int(0.95 * (len(latencies) - 1))], "requests": len(latencies), "errors": errors}


def measure(base: str, clients: int, seconds: float, rounds: int) -> dict[str, float]:
    import httpx

    t0 = time.perf_counter()
    first = httpx.get(base + "/", timeout=300)  # cold: the aggregates are computed once per data version
    cold_ms = 1000 * (time.perf_counter() - t0)
    assert first.status_code == 200 and "policy-00" in first.text, first.text[:300]
    asyncio.run(hammer(base, "/", clients, 1.0))  # warm-up
    trivial, board = [], []
    for _ in range(rounds):
        trivial.append(asyncio.run(hammer(base, "/healthz", clients, seconds)))
        board.append(asyncio.run(hammer(base, "/", clients, seconds)))
    med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
    return {
        "trivial_rps": med(trivial, "rps"), "trivial_p95_ms": med(trivial, "p95_ms"),
        "leaderboard_rps": med(board, "rps"), "leaderboard_p95_ms": med(board, "p95_ms"),
        "leaderboard_over_trivial": med(board, "rps") / med(trivial, "rps"), "leaderboard_cold_ms": cold_ms,
        "errors": sum(r["errors"] for r in trivial + board),
    }


def in_process(url: str, requests: int = 300) -> dict[str, float]:
    """Median service time of each endpoint called straight through ASGI (no sockets, no client
    contention): the server's own cost, independent of the load generator."""
    import httpx

    from web.app import create_app

    app = create_app(url)

    async def run() -> dict[str, float]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            assert (await client.get("/")).status_code == 200  # cold aggregate, excluded
            out = {}
            for name, path in (("trivial", "/healthz"), ("leaderboard", "/")):
                times = []
                for _ in range(requests):
                    t0 = time.perf_counter()
                    await client.get(path)
                    times.append(time.perf_counter() - t0)
                out[f"inprocess_{name}_ms"] = 1000 * statistics.median(times)
            return out

    result = asyncio.run(run())
    app.state.data.store.close()
    result["inprocess_leaderboard_over_trivial"] = result["inprocess_trivial_ms"] / result["inprocess_leaderboard_ms"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each measuring round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--db", default=None, help="reuse/build this SQLite file (default: a temporary one)")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-web-")
    path = Path(args.db) if args.db else Path(tmp) / "web.db"
    url = f"sqlite:///{path}"
    build = {}
    if not path.exists():
        build = build_store(url, args.matches)
        print(f"built {args.matches} matches in {build['insert_s']:.1f} s, {build['snapshot_rows']} snapshot rows in {build['snapshots_s']:.1f} s", file=sys.stderr)
    out: dict[str, object] = {}
    for label, refresh in (("", 2.0), ("refresh0_", 0.0)):
        proc, base = start_server(url, refresh)
        try:
            result = measure(base, args.clients, args.seconds, args.rounds)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        print(f"refresh={refresh}: {json.dumps(result)}", file=sys.stderr)
        out.update({f"{label}{k}": round(v, 3) if isinstance(v, float) else v for k, v in result.items()})
    out.update({k: round(v, 3) for k, v in in_process(url).items()})
    out.update({"matches": args.matches, "clients": args.clients, "cpus": os.cpu_count(), **{k: round(v, 1) for k, v in build.items()}})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
