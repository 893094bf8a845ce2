"""Matches per second of a scripted-bot league with the Ray executor against the in-process
executor on this machine, side by side in one run, plus the per-match costs that docs/cluster.md
turns into a cluster estimate.

- in-process: `arena league run` (league.runner.run_league, the default executor): every match on
  the head's event loop, SQLite store (WAL, synchronous=FULL), live ratings, rerate at the end.
- ray: the same league with league.ray_executor.RayExecutor on a local Ray instance with all of
  this machine's cores: every match a Ray task in a worker process, the record sent back, and the
  head storing it exactly as above. Runs alternate (in-process, ray, in-process, ...) on fresh
  SQLite files; the figure is the median of the repeats. Ray's start-up is not timed, nor the
  first import of the project in its worker processes (one untimed warm-up league: a cluster is
  started once and its workers stay), the executor's own start (checking policies on a worker) is.

Per-match costs, for the estimate:
- play: a worker's time per bot match (MatchRecord.duration_s of the Ray run, mean: a worker plays
  one match at a time, so this is its compute, not time spent waiting on other matches).
- Ray task: empty Ray tasks pushed with the same number in flight: wall time per task on this
  machine, and the head's CPU time per task (submitting, awaiting, receiving).
- head: what the head process spends per match besides playing it, in a league of
  `--head-policies` policies: the runner's scheduling, the store's two transactions and the live
  ratings, with an executor that hands back already-played records instantly (so only the head
  is measured), timed from the first match on. Live snapshots and the final rerate are off here,
  and the league's start-up (registering policies, building the schedule) is not timed: those are
  per-league costs.

    .venv/bin/python -m bench.scale [--repeats 3] [--matches-per-pair 10] [--pg URL]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
from typing import Any

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import ray

from arena.match import MatchRecord
from league.config import GameEntry, LeagueConfig, PolicyEntry
from league.ray_executor import RayExecutor
from league.runner import Executor, InProcessExecutor, build_policies, build_scheduler, play_pairing, run_league
from league.scheduling import Pairing
from league.store import Store

GAMES = ("tictactoe", "connect_four", "kuhn_poker")
POLICIES = (("bot", "bot"), ("bot-b", "bot,seed=b"), ("random", "random"), ("random-b", "random,seed=b"))


def league_config(matches_per_pair: int, concurrency: int) -> LeagueConfig:
    return LeagueConfig(
        name="scale", scheduler="round_robin", matches_per_pair=matches_per_pair, concurrency=concurrency,
        games=[GameEntry(id=g) for g in GAMES], policies=[PolicyEntry(name=n, spec=s) for n, s in POLICIES],
    )


def run_once(config: LeagueConfig, executor: Executor) -> tuple[float, float]:
    """(matches/s, mean driver seconds per match) of one league on a fresh SQLite file."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{folder}/scale.db")
        start = time.perf_counter()
        summary = asyncio.run(run_league(config, store, executor=executor))
        elapsed = time.perf_counter() - start
        play = statistics.fmean(store.match_record(int(r.match_id)).duration_s for r in store.results(summary.league_id))
        store.close()
    assert summary.finished == summary.total, summary
    return summary.finished / elapsed, play


def _noop(i: int) -> int:
    return i


def ray_task_costs(tasks: int, in_flight: int) -> tuple[float, float]:
    """(wall ms per empty task on this machine, head CPU ms per task), `in_flight` at a time."""
    remote = ray.remote(num_cpus=1)(_noop)
    ray.get([remote.remote(i) for i in range(in_flight * 2)])  # workers started and warm

    async def push() -> None:
        pending: set[Any] = set()
        for i in range(tasks):
            pending.add(asyncio.ensure_future(_await(remote.remote(i))))
            if len(pending) >= in_flight:
                _, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        await asyncio.gather(*pending)

    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(push())
    return (time.perf_counter() - wall) * 1000 / tasks, (time.process_time() - cpu) * 1000 / tasks


async def _await(ref: Any) -> Any:
    return await ref


class ReplayExecutor(Executor):
    """Hands back records played beforehand, instantly: what is left is the head's own work."""

    def __init__(self, records: dict[str, MatchRecord], providers: dict[str, str]) -> None:
        self.records, self.providers = records, providers

    async def start(self) -> dict[str, str]:
        return dict(self.providers)

    async def play(self, pairing: Pairing) -> MatchRecord:
        await asyncio.sleep(0)
        return self.records[pairing.key]


def head_cost(policies: int, matches: int, url: str | None) -> float:
    """Head ms per match in a round robin of `policies` random movers on Nim, `matches` long."""
    config = LeagueConfig(
        name=f"head-{policies}", scheduler="round_robin", budget=matches, concurrency=64, games=[GameEntry(id="nim")],
        policies=[PolicyEntry(name=f"p{i:04d}", spec=f"random,seed={i}") for i in range(policies)],
    )
    scheduler = build_scheduler(config)
    plan = scheduler.next_pairings([], 0, scheduler.total())
    built = build_policies(config)
    records = {p.key: asyncio.run(play_pairing(p, built, {}, None)) for p in plan}
    executor = ReplayExecutor(records, {n: p.provider for n, p in built.items()})
    with tempfile.TemporaryDirectory() as folder:
        store = Store(url or f"sqlite:///{folder}/head.db")
        start: list[float] = []  # from the first match on: the league's start-up (registering the
        # policies, building the schedule) is paid once per run, not per match
        summary = asyncio.run(run_league(config, store, executor=executor, live_snapshots=False, rerate_at_end=False,
                                         on_start=lambda *_: start.append(time.perf_counter())))
        elapsed = time.perf_counter() - start[0]
        store.close()
    assert summary.played_now == len(plan), summary
    return elapsed * 1000 / len(plan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches-per-pair", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--head-policies", type=int, default=1000)
    parser.add_argument("--head-matches", type=int, default=2000)
    parser.add_argument("--pg", default=None, help="also measure the head on this PostgreSQL URL (its tables are created if missing; use an empty database)")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    config = league_config(args.matches_per_pair, concurrency=4 * cores)
    print(f"machine: {platform.machine()} {cores} cores, Python {platform.python_version()}, Ray {ray.__version__}")
    print(f"{build_scheduler(config).total()} matches per run ({', '.join(GAMES)}; {len(POLICIES)} scripted policies; round robin; {config.concurrency} in flight)")
    started = time.perf_counter()
    ray.init(num_cpus=cores, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    print(f"ray.init (local instance, not timed below): {time.perf_counter() - started:.1f} s")
    warm = league_config(1, config.concurrency)
    run_once(warm, RayExecutor(warm))
    local_rates, ray_rates, plays = [], [], []
    for _ in range(args.repeats):
        local_rates.append(run_once(config, InProcessExecutor(config))[0])
        rate, play = run_once(config, RayExecutor(config))
        ray_rates.append(rate)
        plays.append(play)
        print(f"in-process {local_rates[-1]:7.1f} matches/s   ray {ray_rates[-1]:7.1f} matches/s")
    local, remote = statistics.median(local_rates), statistics.median(ray_rates)
    print(f"median: in-process {local:.1f}, ray {remote:.1f} matches/s, ray/in-process {remote / local:.2f}")
    task_wall_ms, task_head_ms = ray_task_costs(2000, config.concurrency)
    ray.shutdown()
    play_ms = statistics.median(plays) * 1000
    head_ms = head_cost(args.head_policies, args.head_matches, None)
    print(f"per match: play {play_ms:.2f} ms (a worker, bots); empty Ray task {task_wall_ms:.2f} ms wall on {cores} cores, "
          f"{task_head_ms:.2f} ms head CPU; head {head_ms:.2f} ms (SQLite, {args.head_policies} policies)")
    result = {
        "ray_over_inprocess": round(remote / local, 3), "inprocess_matches_per_s": round(local, 1), "ray_matches_per_s": round(remote, 1),
        "play_ms": round(play_ms, 2), "ray_task_wall_ms": round(task_wall_ms, 3), "ray_task_head_cpu_ms": round(task_head_ms, 3),
        "head_ms_sqlite": round(head_ms, 3), "head_policies": args.head_policies, "cores": cores, "repeats": args.repeats,
    }
    if args.pg:
        result["head_ms_postgres"] = round(head_cost(args.head_policies, args.head_matches, args.pg), 3)
        print(f"head on PostgreSQL: {result['head_ms_postgres']:.2f} ms per match")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
