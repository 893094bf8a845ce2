"""Plays a league: many matches in flight, every finished match stored at once, resumable.

The loop keeps up to `concurrency` matches running, and at most `provider_limits[p]` of them
using provider `p` (a match counts once per provider among its seats). Pairings come first from
the store (handed out by an earlier run that was killed or interrupted and never finished: played
again from scratch with the same key, seats and seed), then from the scheduler; new pairings are
persisted as `scheduled` before they start and marked `running` when they do. Each finished match
is written with its turns in one transaction (league/store.py), so `kill -9` at any moment loses
at most the matches in flight, which the next run replays; nothing is counted twice.

Stopping (Ctrl-C / SIGTERM, or `stop` set by a caller): no new matches start; matches in flight
get `grace_seconds` to finish, then are cancelled and marked `abandoned` (replayed next time).
A second Ctrl-C abandons at once.

Where a match runs is the executor's business (`Executor`): the in-process one (the default) plays
it on this event loop; league/ray_executor.py plays it as a Ray task on a cluster. Everything else
(scheduling, limits, the store, ratings) stays here, in the one process that writes the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from abc import ABC, abstractmethod
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping

from arena.match import MatchRecord, play_match
from arena.policy import Policy, make_policy
from games.registry import make_game
from league.config import LeagueConfig
from league.results import GameResult
from league.scheduling import GameSlot, Pairing, Scheduler, make_scheduler
from league.store import FINISHED, Store


class LeagueError(ValueError):
    """The league cannot start (a policy that cannot be built, a changed schedule): one line."""


class MatchLost(Exception):
    """An executor could not play a pairing at all (its worker or node was lost more often than
    it retries, or a worker cannot run the project's code). Not a result: the match is marked
    `abandoned` and the next run replays it."""


class Executor(ABC):
    """Where matches run. The runner keeps scheduling, limits, the store and the ratings; an
    executor only turns a pairing into the driver's MatchRecord."""

    @abstractmethod
    async def start(self) -> dict[str, str]:
        """Get ready to play (build policies, connect); returns {policy name: Policy.provider}.
        A policy that cannot be built raises LeagueError naming `policies[i].spec`."""

    @abstractmethod
    async def play(self, pairing: Pairing) -> MatchRecord:
        """Play one pairing to its end. Raises MatchLost when it could not be played at all."""

    async def close(self) -> None:
        """Release what `start` acquired. Safe to call more than once."""


class InProcessExecutor(Executor):
    """The default: every match on this process's event loop, one policy object per entry."""

    def __init__(self, config: LeagueConfig) -> None:
        self.config = config
        self.options = {g.id: g.options for g in config.games}
        self.policies: dict[str, Policy] = {}

    async def start(self) -> dict[str, str]:
        self.policies = build_policies(self.config)
        return {name: policy.provider for name, policy in self.policies.items()}

    async def play(self, pairing: Pairing) -> MatchRecord:
        return await play_pairing(pairing, self.policies, self.options, self.config.move_timeout)

    async def close(self) -> None:
        for policy in self.policies.values():
            with contextlib.suppress(Exception):
                await policy.close()
        self.policies = {}


@dataclass
class LeagueSummary:
    league_id: int
    finished: int  # matches with a result in this league (all runs)
    played_now: int  # finished by this run
    replayed: int  # handed out by an earlier run, unfinished, played again now
    total: int | None  # what the schedule will play in all (None: open-ended)
    aborted: int = 0  # matches this run ended without a result (step cap, game error)
    abandoned: int = 0  # in flight when this run was stopped, or lost by the executor; the next run replays them
    interrupted: bool = False
    elapsed_s: float = 0.0


@dataclass
class MatchDone:
    """What the runner tells its `on_finish` callback after each stored match."""

    record: MatchRecord
    pairing: Pairing
    finished: int  # matches with a result in the league so far
    total: int | None
    in_flight: int
    ratings: Any  # league.ratings.OnlineRatings: live standings, folded from the whole log
    stored: bool = True  # False: another writer had already finished this key
    extra: dict[str, Any] = field(default_factory=dict)


def build_scheduler(config: LeagueConfig) -> Scheduler:
    slots = [GameSlot(g.id, g.weight, g.players) for g in config.games]
    return make_scheduler(
        config.scheduler,
        slots,
        [p.name for p in config.policies],
        matches_per_pair=config.matches_per_pair,
        budget=config.budget,
        seed=config.seed,
    )


def build_policies(config: LeagueConfig, only: Collection[str] | None = None) -> dict[str, Policy]:
    """One policy object per entry (or per entry named in `only`), shared by all its matches (a
    local model loads once)."""
    policies: dict[str, Policy] = {}
    for i, entry in enumerate(config.policies):
        if only is not None and entry.name not in only:
            continue
        try:
            policy = make_policy(entry.spec)
        except Exception as exc:  # noqa: BLE001 - a policy that cannot be built stops the league in one line
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise LeagueError(f"policies[{i}].spec: cannot build {entry.spec!r}: {detail}") from None
        policy.name = entry.name
        policies[entry.name] = policy
    return policies


async def play_pairing(pairing: Pairing, policies: Mapping[str, Policy], options: Mapping[str, dict[str, Any]], move_timeout: float | None) -> MatchRecord:
    """One match of `pairing` through the driver. When the game itself raises, a record with no
    result comes back, so a broken game ends as `aborted` instead of being replayed forever."""
    seats = [policies[name] for name in pairing.seats]
    try:
        game = make_game(pairing.game_id, len(pairing.seats), **options.get(pairing.game_id, {}))
        return await play_match(game, seats, pairing.seed, move_timeout=move_timeout, match_id=pairing.key)
    except Exception as exc:  # noqa: BLE001 - policies cannot raise here (the driver catches them); games can
        return MatchRecord(
            match_id=pairing.key, game_id=pairing.game_id, num_players=len(pairing.seats), seed=pairing.seed,
            policies=list(pairing.seats), specs=[p.spec for p in seats],
            status=f"game error: {type(exc).__name__}: {str(exc)[:300]}",
        )


def new_ratings() -> Any:
    from league.ratings import OnlineRatings

    return OnlineRatings()


async def run_league(
    config: LeagueConfig,
    store: Store,
    *,
    on_finish: Callable[[MatchDone], None] | None = None,
    on_start: Callable[[int, int | None, int], None] | None = None,
    stop: asyncio.Event | None = None,
    handle_signals: bool = False,
    live_snapshots: bool = True,
    rerate_at_end: bool = True,
    executor: Executor | None = None,
) -> LeagueSummary:
    """Play (or resume) `config` into `store`. `on_start(finished, total, replaying)` is called once
    before the first match; `on_finish` after every stored match. With `handle_signals`, SIGINT
    and SIGTERM stop the league gracefully (see the module docstring). `executor` decides where
    matches run (default: this process)."""
    started = time.perf_counter()
    league_id = store.open_league(config.name, config.stored_config(), config.schedule_hash())
    for game in config.games:
        info = make_game(game.id, game.players, **game.options)
        store.upsert_game(game.id, info.name, info.rules)
    for entry in config.policies:
        # No notes in the league file leave the stored ones alone (e.g. a training checkpoint's run/step).
        store.upsert_policy(entry.name, entry.spec, entry.meta or None)
    scheduler = build_scheduler(config)
    limits = dict(config.provider_limits)
    stop = stop or asyncio.Event()
    hard_stop = asyncio.Event()

    finished = store.results(league_id)
    ratings = new_ratings()
    for result in finished:
        ratings.fold(result)
    per_game = Counter(r.game_id for r in finished)
    pending: deque[Pairing] = deque(Pairing(r.key, r.game_id, tuple(r.seats), int(r.seed)) for r in store.unfinished(league_id))
    summary = LeagueSummary(league_id, len(finished), 0, len(pending), scheduler.total())
    issued = store.count(league_id)
    in_flight: dict[asyncio.Task, Pairing] = {}
    busy: Counter[str] = Counter()  # matches in flight per limited provider
    snapshot_step = max(5, (summary.total or 400) // 20)
    # Started last, so nothing between here and the loop's `finally` can leave it unclosed.
    executor = executor or InProcessExecutor(config)
    try:
        provider_of = await executor.start()
    except BaseException:
        await executor.close()
        raise
    if on_start is not None:
        on_start(len(finished), summary.total, len(pending))

    def providers(pairing: Pairing) -> set[str]:
        return {provider_of[name] for name in pairing.seats if provider_of[name] in limits}

    def can_start(pairing: Pairing) -> bool:
        return all(busy[p] < limits[p] for p in providers(pairing))

    def next_batch() -> tuple[list[Pairing], list[Pairing]]:
        """(pairings to start now, pairings the scheduler just handed out)."""
        nonlocal issued
        room = config.concurrency - len(in_flight)
        batch: list[Pairing] = []
        handed_out: list[Pairing] = []
        while len(batch) < room:
            choice = next((p for p in pending if can_start(p)), None)
            if choice is None:
                if len(pending) >= config.concurrency:
                    break  # enough waiting on busy providers: do not run ahead of the schedule
                fresh = scheduler.next_pairings(finished, issued, room - len(batch))
                if not fresh:
                    break
                handed_out.extend(fresh)
                issued += len(fresh)
                pending.extend(fresh)
                continue
            pending.remove(choice)
            batch.append(choice)
            for provider in providers(choice):
                busy[provider] += 1
        return batch, handed_out

    def record_result(pairing: Pairing, record: MatchRecord | str) -> None:
        if isinstance(record, str):  # the executor could not play it: no result; the next run replays it
            summary.abandoned += store.abandon(league_id, [pairing.key], f"{record}; replayed on resume")
            return
        match_id = store.finish(league_id, pairing.key, record)
        if match_id is not None and record.outcome is not None:
            result = GameResult(str(match_id), pairing.game_id, pairing.seats, tuple(record.outcome["ranks"]))
            finished.append(result)
            ratings.fold(result)
            summary.played_now += 1
            per_game[pairing.game_id] += 1
            if live_snapshots and len(finished) % snapshot_step == 0:
                store.add_snapshots(league_id, live_snapshot_rows(ratings, len(finished), per_game))
        elif match_id is not None:
            summary.aborted += 1
        if on_finish is not None:
            on_finish(MatchDone(record, pairing, len(finished), summary.total, len(in_flight), ratings, match_id is not None))

    loop = asyncio.get_running_loop()
    installed: list[int] = []
    if handle_signals:
        def on_signal() -> None:
            (hard_stop if stop.is_set() else stop).set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, on_signal)
                installed.append(sig)

    stop_waiter = asyncio.ensure_future(stop.wait())
    hard_waiter = asyncio.ensure_future(hard_stop.wait())
    deadline: float | None = None
    try:
        while True:
            if not stop.is_set():
                batch, handed_out = next_batch()
                # New pairings are persisted and started in one transaction, before they play.
                store.launch(league_id, handed_out, [p.key for p in batch])
                if batch:
                    for pairing in batch:
                        in_flight[asyncio.create_task(executor.play(pairing), name=f"match {pairing.key}")] = pairing
            if not in_flight:
                break
            if stop.is_set() and deadline is None:
                deadline = loop.time() + config.grace_seconds
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            waiters = set(in_flight) | ({hard_waiter} if stop.is_set() else {stop_waiter})
            done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in done & set(in_flight):
                pairing = in_flight.pop(task)
                for provider in providers(pairing):
                    busy[provider] -= 1
                record_result(pairing, _record_of(task))
            if stop.is_set() and (hard_stop.is_set() or (deadline is not None and loop.time() >= deadline)):
                break
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        for waiter in (stop_waiter, hard_waiter):
            waiter.cancel()
        if in_flight:
            for task in in_flight:
                task.cancel()
            await asyncio.gather(*in_flight, return_exceptions=True)
            with contextlib.suppress(Exception):  # the store may be what failed
                summary.abandoned += store.abandon(league_id, [p.key for p in in_flight.values()], "interrupted; replayed on resume")
        await executor.close()
    summary.interrupted = stop.is_set()
    # From the store, not this run's tally: another process may be finishing the same league.
    summary.finished = store.count(league_id, FINISHED)
    if rerate_at_end:
        from league.snapshots import rerate

        rerate(store, league_id)
    summary.elapsed_s = time.perf_counter() - started
    return summary


def _record_of(task: asyncio.Task) -> MatchRecord | str:
    """The executor's record, or why it could not play the match (the match stays unfinished and
    the next run replays it: games' own errors never get here, play_pairing records them)."""
    try:
        return task.result()
    except MatchLost as exc:
        return str(exc)[:500]
    except Exception as exc:  # noqa: BLE001 - an executor's own failure must cost one match, not the league
        return f"executor error: {type(exc).__name__}: {str(exc)[:300]}"


def live_snapshot_rows(ratings: Any, after: int, per_game: Counter[str]) -> list[dict[str, Any]]:
    """TrueSkill and Elo rows from the live ratings (the web's curves while a league runs), for
    all games (after `after` matches) and each game (after its own count); `rerate` replaces
    them with the full recompute (Bradley-Terry included) at the end."""
    rows: list[dict[str, Any]] = []
    for game, count in [(None, after), *sorted(per_game.items())]:
        for system in ("trueskill", "elo"):
            for row in ratings.rows(system, game):
                rows.append({
                    "game_id": game or "", "system": system, "after_matches": count, "policy": row.policy,
                    "rating": float(row.rating), "lo": float(row.lo), "hi": float(row.hi), "rank": int(row.rank), "games": int(row.games),
                })
    return rows
