"""Plays a league: many matches in flight, every finished match stored at once, resumable.

The loop keeps `concurrency` matches running. Pairings come first from the store (handed out by
an earlier run that was killed, never finished: replayed with the same key, seats and seed), then
from the scheduler, and are persisted as `scheduled` before they start. Each finished match is
written with its turns in one transaction (see league/store.py), so `kill -9` at any moment loses
at most the matches in flight, which the next run replays; nothing is counted twice.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from dataclasses import dataclass
from typing import Callable

from arena.match import MatchRecord, play_match
from arena.policy import Policy, make_policy
from games.registry import make_game
from league.config import LeagueConfig
from league.ratings import leaderboard
from league.results import GameResult
from league.scheduling import GameSlot, Pairing, make_scheduler
from league.store import Store


@dataclass
class LeagueSummary:
    league_id: int
    finished: int  # finished matches in the league (all runs)
    played_now: int  # finished by this run
    replayed: int  # matches left unfinished by an earlier run and played again now
    total: int | None


def build_scheduler(config: LeagueConfig):
    slots = [GameSlot(g.id, g.weight, g.players) for g in config.games]
    return make_scheduler(
        config.scheduler,
        slots,
        [p.name for p in config.policies],
        matches_per_pair=config.matches_per_pair,
        budget=config.budget,
        rounds=config.rounds,
        seed=config.seed,
    )


async def run_league(
    config: LeagueConfig,
    store: Store,
    *,
    on_finish: Callable[[MatchRecord, int, int | None], None] | None = None,
) -> LeagueSummary:
    league_id = store.league_id(config.name, config.model_dump(exclude={"db"}))
    for entry in config.policies:
        store.upsert_policy(entry.name, entry.spec)
    scheduler = build_scheduler(config)
    policies: dict[str, Policy] = {}
    for entry in config.policies:
        policy = make_policy(entry.spec)
        policy.name = entry.name
        policies[entry.name] = policy
    options = {g.id: (g.players, g.options) for g in config.games}
    limits = {name: asyncio.Semaphore(n) for name, n in config.provider_limits.items()}

    finished = store.results(league_id)
    pending: deque[Pairing] = deque(
        Pairing(row.key, row.game_id, tuple(row.seats), row.seed) for row in store.unfinished(league_id)
    )
    replayed = len(pending)
    issued = store.count(league_id)
    played_now = 0
    in_flight: dict[asyncio.Task, Pairing] = {}

    async def play(pairing: Pairing) -> MatchRecord:
        players, game_options = options.get(pairing.game_id, (len(pairing.seats), {}))
        game = make_game(pairing.game_id, len(pairing.seats), **game_options)
        seats = [policies[name] for name in pairing.seats]
        providers = sorted({p.provider for p in seats if p.provider in limits})
        async with contextlib.AsyncExitStack() as stack:
            for provider in providers:  # sorted: no two matches wait on each other's semaphores
                await stack.enter_async_context(limits[provider])
            return await play_match(game, seats, pairing.seed, move_timeout=config.move_timeout, match_id=pairing.key)

    try:
        while True:
            while len(in_flight) < config.concurrency:
                if not pending:
                    fresh = scheduler.next_pairings(finished, issued, config.concurrency - len(in_flight))
                    if not fresh:
                        break
                    store.schedule(league_id, fresh)
                    issued += len(fresh)
                    pending.extend(fresh)
                pairing = pending.popleft()
                in_flight[asyncio.create_task(play(pairing))] = pairing
            if not in_flight:
                break
            done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                pairing = in_flight.pop(task)
                record = task.result()
                if store.finish(league_id, pairing.key, record) and record.outcome is not None:
                    finished.append(GameResult(pairing.key, pairing.game_id, pairing.seats, tuple(record.outcome["ranks"])))
                    played_now += 1
                    if on_finish is not None:
                        on_finish(record, len(finished), scheduler.total())
    finally:
        for task in in_flight:
            task.cancel()
        if in_flight:
            await asyncio.gather(*in_flight, return_exceptions=True)
        for policy in policies.values():
            await policy.close()
    return LeagueSummary(league_id, len(finished), played_now, replayed, scheduler.total())


def standings(store: Store, league_id: int | None, by: str = "trueskill", game: str | None = None, bootstrap: int = 200):
    return leaderboard(store.results(league_id, game), by=by, game=game, bootstrap=bootstrap)
