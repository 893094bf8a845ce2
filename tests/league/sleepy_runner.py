"""A league process for the lease tests: `python -m tests.league.sleepy_runner CONFIG DB LEASE_S`
(`--wait`: after start-up, wait for a line on stdin) plays CONFIG into DB with a `sleepy` policy kind (a random legal move after DELAY seconds, so
matches stay running long enough for a second process to meet them), then prints its summary as
one JSON line."""

from __future__ import annotations

import asyncio
import json
import random
import sys
from dataclasses import asdict

from arena.policy import Policy, PolicyReply, register_kind
from league.config import load_config
from league.runner import run_league
from league.store import Store

DELAY_S = 0.3


class SleepyPolicy(Policy):
    provider = "scripted"

    async def act(self, request):
        await asyncio.sleep(DELAY_S)
        return PolicyReply(action=request.random_move(random.Random(request.observation.turn)))


register_kind("sleepy", lambda spec: SleepyPolicy(), "sleepy")


def main() -> None:
    config_path, db, lease_s = sys.argv[1], sys.argv[2], float(sys.argv[3])
    store = Store(db)
    if "--wait" in sys.argv:  # imports done: start when the test says (a line on stdin), not seconds later
        print("ready", flush=True)
        sys.stdin.readline()
    summary = asyncio.run(run_league(load_config(config_path), store, lease_seconds=lease_s, live_snapshots=False))
    print(json.dumps(asdict(summary)), flush=True)


if __name__ == "__main__":
    main()
