"""Matches per second of a scripted-bot league with full persistence and rating, against the raw
game loop of the same pairings, side by side in one run.

- raw loop: for each scheduled pairing, reset the game and let each seat's scripted mover (the
  game's bot or a random legal move) play, with nothing recorded.
- league: `arena league run` machinery (league.runner.run_league): the match driver (MatchRecord
  of every turn), the SQLite store (WAL, synchronous=FULL; each match marked running, then written
  with all its turns in one transaction), live TrueSkill/Elo folding and snapshots, and the full
  rating recompute (`rerate`, Bradley-Terry bootstrap included) at the end.

    .venv/bin/python -m bench.league [--matches-per-pair 40] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import tempfile
import time

from games.registry import make_game
from league.config import GameEntry, LeagueConfig, PolicyEntry
from league.runner import build_scheduler, run_league
from league.store import Store

GAMES = ("tictactoe", "connect_four", "kuhn_poker")


def config(matches_per_pair: int) -> LeagueConfig:
    return LeagueConfig(
        name="bench",
        scheduler="round_robin",
        matches_per_pair=matches_per_pair,
        concurrency=16,
        games=[GameEntry(id=g) for g in GAMES],
        policies=[PolicyEntry(name="bot", spec="bot"), PolicyEntry(name="random", spec="random"), PolicyEntry(name="random-b", spec="random,seed=b")],
    )


def schedule(cfg: LeagueConfig) -> list:
    scheduler = build_scheduler(cfg)
    return scheduler.next_pairings([], 0, scheduler.total())


def raw_loop(cfg: LeagueConfig) -> float:
    plan = schedule(cfg)
    games = {g: make_game(g) for g in GAMES}
    start = time.perf_counter()
    for pairing in plan:
        game = games[pairing.game_id]
        game.reset(pairing.seed)
        rng = random.Random(pairing.seed)
        while not game.is_over():
            player = game.to_act()[0]
            seat = pairing.seats[player]
            move = game.bot_move(player, rng) if seat == "bot" else game.random_move(player, rng)
            game.step(player, move)
    return len(plan) / (time.perf_counter() - start)


def league(cfg: LeagueConfig) -> float:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{folder}/bench.db")
        start = time.perf_counter()
        summary = asyncio.run(run_league(cfg, store))  # rerates from the log at the end
        elapsed = time.perf_counter() - start
        store.close()
    return summary.finished / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--matches-per-pair", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cfg = config(args.matches_per_pair)
    total = len(schedule(cfg))
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"{total} matches per run ({', '.join(GAMES)}; bot, random, random-b; round robin)")
    raw, full = [], []
    for _ in range(args.repeats):
        raw.append(raw_loop(cfg))
        full.append(league(cfg))
        print(f"raw loop {raw[-1]:8.1f} matches/s   league {full[-1]:8.1f} matches/s")
    r, l = statistics.median(raw), statistics.median(full)
    print(f"median: raw {r:.1f}, league {l:.1f} matches/s, ratio {l / r:.2f} (target >= 0.25)")
    print(json.dumps({"league_over_raw_loop": round(l / r, 3), "league_matches_per_s": round(l, 1), "raw_matches_per_s": round(r, 1), "matches": total, "repeats": args.repeats}))


if __name__ == "__main__":
    main()
