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
from league.config import LeagueConfig, build_scheduler
from league.leases import LEASE_SECONDS, keep_alive, new_runner_id, owner_is_dead, retire
from league.results import GameResult
from league.scheduling import Pairing
from league.startup import check_start
from league.store import FINISHED, RUNNING, Store


HELD_POLL_S = 1.0  # how often a runner waiting on another runner's live matches looks again


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

    def __init__(self, config: LeagueConfig, policy_defaults: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.config = config
        self.policy_defaults = policy_defaults
        self.options = {g.id: g.options for g in config.games}
        self.policies: dict[str, Policy] = {}

    async def start(self) -> dict[str, str]:
        self.policies = build_policies(self.config, defaults=self.policy_defaults)
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
    held_elsewhere: int = 0  # found running under another live runner and left to it (waited for, not replayed)
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


def build_policies(
    config: LeagueConfig, only: Collection[str] | None = None, defaults: Mapping[str, tuple[str, str]] | None = None,
) -> dict[str, Policy]:
    """One policy object per entry (or per entry named in `only`), shared by all its matches (a
    local model loads once). `defaults`: what the command prefers for parameters a spec leaves
    unset ({"engine": ("hf", why)}; arena.policy.make_policy)."""
    policies: dict[str, Policy] = {}
    for i, entry in enumerate(config.policies):
        if only is not None and entry.name not in only:
            continue
        try:
            policy = make_policy(entry.spec, defaults)
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
    lease_seconds: float = LEASE_SECONDS,
    policy_defaults: Mapping[str, tuple[str, str]] | None = None,
) -> LeagueSummary:
    """Play (or resume) `config` into `store`. `on_start(finished, total, replaying)` is called once
    before the first match; `on_finish` after every stored match. With `handle_signals`, SIGINT
    and SIGTERM stop the league gracefully (see the module docstring). `executor` decides where
    matches run (default: this process, building policies with `policy_defaults`: see
    build_policies). Matches another live runner is playing are left to it
    (league/leases.py): only those whose owner's lease expired are replayed."""
    started = time.perf_counter()
    # Nothing is written until every check has passed and every policy is built (league/startup.py).
    league_start = check_start(config, store)
    run = LeagueRun(
        config, store, build_scheduler(config), executor or InProcessExecutor(config, policy_defaults), stop or asyncio.Event(),
        lease_seconds, on_finish, live_snapshots,
    )
    await run.open(league_start)
    if on_start is not None:
        on_start(len(run.finished), run.summary.total, len(run.pending))
    if handle_signals:
        run.stop_on_signals()
    try:
        await run.play()
    finally:
        await run.close()
    return run.summarize(rerate_at_end, started)


class LeagueRun:
    """One run of a league, as the steps of run_league: `open` (start the executor, register the
    league, find what earlier runs left), `play` (keep matches in flight until the schedule ends or
    a stop), `close` (abandon what is still in flight, release the executor), `summarize`."""

    def __init__(
        self, config: LeagueConfig, store: Store, scheduler: Any, executor: Executor, stop: asyncio.Event,
        lease_seconds: float, on_finish: Callable[[MatchDone], None] | None, live_snapshots: bool,
    ) -> None:
        self.config, self.store, self.scheduler, self.executor = config, store, scheduler, executor
        self.stop, self.hard_stop = stop, asyncio.Event()  # a second signal sets hard_stop: abandon at once
        self.lease_seconds, self.on_finish, self.live_snapshots = lease_seconds, on_finish, live_snapshots
        self.limits = dict(config.provider_limits)
        self.runner_id = new_runner_id()  # the owner written on every match this run claims
        self.in_flight: dict[asyncio.Task, Pairing] = {}
        self.busy: Counter[str] = Counter()  # matches in flight per limited provider
        self.loop = asyncio.get_running_loop()
        self.installed: list[int] = []  # signals whose handlers this run installed
        self.waiters: list[asyncio.Future] = []

    async def open(self, league_start: Any) -> None:
        """Start the executor and register the league; then what earlier runs left: their results
        (folded into the ratings), the pairings to replay, and matches another live runner holds."""
        store = self.store
        try:
            self.provider_of = await self.executor.start()
            league_id = self.league_id = league_start.register(store)  # the league, its games and policies: one transaction
            store.expire_leases(league_id, sorted({r.owner for r in store.held(league_id, self.lease_seconds) if owner_is_dead(r.owner)}))
            self.finished = store.results(league_id)
            self.pending: deque[Pairing] = deque(_pairing(r) for r in store.unfinished(league_id, self.lease_seconds))
            self.held: dict[str, Pairing] = {r.key: _pairing(r) for r in store.held(league_id, self.lease_seconds)}  # another runner's
            self.issued = store.count(league_id)
        except BaseException:  # nothing between here and close() may leave the executor open
            await self.executor.close()
            retire(self.runner_id)
            raise
        self.ratings = new_ratings()
        for result in self.finished:
            self.ratings.fold(result)
        self.per_game = Counter(r.game_id for r in self.finished)
        self.summary = LeagueSummary(league_id, len(self.finished), 0, len(self.pending), self.scheduler.total())
        self.elsewhere = set(self.held)  # keys another live runner was playing when this one wanted them
        self.snapshot_step = max(5, (self.summary.total or 400) // 20)

    def stop_on_signals(self) -> None:
        """SIGINT/SIGTERM set `stop` (graceful); a second one sets `hard_stop`."""
        def on_signal() -> None:
            (self.hard_stop if self.stop.is_set() else self.stop).set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                self.loop.add_signal_handler(sig, on_signal)
                self.installed.append(sig)

    async def play(self) -> None:
        """Keep up to `concurrency` matches in flight, each finished one stored at once, until the
        schedule is done, or `stop` is set and the grace period ends (or `hard_stop`)."""
        stop, hard_stop, in_flight, loop = self.stop, self.hard_stop, self.in_flight, self.loop
        stop_waiter = asyncio.ensure_future(stop.wait())
        hard_waiter = asyncio.ensure_future(hard_stop.wait())
        heart = asyncio.ensure_future(keep_alive(lambda: self.store.heartbeat(self.league_id, self.runner_id), self.lease_seconds))
        self.waiters = [stop_waiter, hard_waiter, heart]
        deadline: float | None = None
        while True:
            if not stop.is_set():
                batch, handed_out = self.next_batch()
                # New pairings are persisted and claimed in one transaction, before they play.
                self.launch(batch, handed_out)
                if not in_flight and batch:
                    continue  # another runner had claimed all of them: hand out the next ones
                if not in_flight and self.held:
                    # Only another runner's live matches are left: wait for them, and replay any
                    # whose runner dies meanwhile, so the league ends complete either way.
                    if not self.reclaim_held() and self.held:
                        await asyncio.wait({stop_waiter}, timeout=min(HELD_POLL_S, self.lease_seconds / 4))
                    continue
            if not in_flight:
                break
            if stop.is_set() and deadline is None:
                deadline = loop.time() + self.config.grace_seconds
            timeout = None if deadline is None else max(0.0, deadline - loop.time())
            waiters = set(in_flight) | ({hard_waiter} if stop.is_set() else {stop_waiter})
            done, _ = await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for task in done & set(in_flight):
                pairing = in_flight.pop(task)
                for provider in self.providers(pairing):
                    self.busy[provider] -= 1
                self.record_result(pairing, _record_of(task))
            if stop.is_set() and (hard_stop.is_set() or (deadline is not None and loop.time() >= deadline)):
                break

    def providers(self, pairing: Pairing) -> set[str]:
        return {self.provider_of[name] for name in pairing.seats if self.provider_of[name] in self.limits}

    def can_start(self, pairing: Pairing) -> bool:
        return all(self.busy[p] < self.limits[p] for p in self.providers(pairing))

    def next_batch(self) -> tuple[list[Pairing], list[Pairing]]:
        """(pairings to start now, pairings the scheduler just handed out)."""
        room = self.config.concurrency - len(self.in_flight)
        batch: list[Pairing] = []
        handed_out: list[Pairing] = []
        while len(batch) < room:
            choice = next((p for p in self.pending if self.can_start(p)), None)
            if choice is None:
                if len(self.pending) >= self.config.concurrency:
                    break  # enough waiting on busy providers: do not run ahead of the schedule
                fresh = self.scheduler.next_pairings(self.finished, self.issued, room - len(batch))
                if not fresh:
                    break
                handed_out.extend(fresh)
                self.issued += len(fresh)
                self.pending.extend(fresh)
                continue
            self.pending.remove(choice)
            batch.append(choice)
            for provider in self.providers(choice):
                self.busy[provider] += 1
        return batch, handed_out

    def launch(self, batch: list[Pairing], handed_out: list[Pairing]) -> None:
        """Persist new pairings and claim the batch in one transaction; play what was claimed.
        A pairing another live runner claimed first is left to it."""
        _, claimed = self.store.launch(self.league_id, handed_out, [p.key for p in batch], owner=self.runner_id, lease_s=self.lease_seconds)
        for pairing in batch:
            if pairing.key in claimed:
                self.in_flight[asyncio.create_task(self.executor.play(pairing), name=f"match {pairing.key}")] = pairing
                continue
            for provider in self.providers(pairing):
                self.busy[provider] -= 1
            self.held[pairing.key] = pairing
            self.elsewhere.add(pairing.key)

    def reclaim_held(self) -> bool:
        """Move matches whose runner died since (lease lapsed, or its process gone) back to
        `pending`; those it finished are dropped. True when something is left to play."""
        store, league_id, held = self.store, self.league_id, self.held
        if not held:
            return False
        expired = {r.key for r in store.unfinished(league_id, self.lease_seconds) if r.key in held}
        dead = sorted({r.owner for r in store.held(league_id, self.lease_seconds) if r.key in held and owner_is_dead(r.owner)})
        if dead:
            store.expire_leases(league_id, dead)
            expired = {r.key for r in store.unfinished(league_id, self.lease_seconds) if r.key in held}
        states = store.statuses(league_id, list(held))
        for key in list(held):
            if key in expired:
                self.pending.append(held.pop(key))
                self.elsewhere.discard(key)
                self.summary.replayed += 1
            elif states.get(key) != RUNNING:
                held.pop(key)  # finished (or given up) by its runner
        return bool(self.pending)

    def record_result(self, pairing: Pairing, record: MatchRecord | str) -> None:
        """Store one match's record (or abandon it when the executor could not play it), fold its
        result into the live ratings, and tell `on_finish`."""
        summary, finished = self.summary, self.finished
        if isinstance(record, str):  # the executor could not play it: no result; the next run replays it
            summary.abandoned += self.store.abandon(self.league_id, [pairing.key], f"{record}; replayed on resume", self.runner_id)
            return
        match_id = self.store.finish(self.league_id, pairing.key, record)
        if match_id is not None and record.outcome is not None:
            result = GameResult(str(match_id), pairing.game_id, pairing.seats, tuple(record.outcome["ranks"]))
            finished.append(result)
            self.ratings.fold(result)
            summary.played_now += 1
            self.per_game[pairing.game_id] += 1
            if self.live_snapshots and len(finished) % self.snapshot_step == 0:
                self.store.add_snapshots(self.league_id, live_snapshot_rows(self.ratings, len(finished), self.per_game))
        elif match_id is not None:
            summary.aborted += 1
        if self.on_finish is not None:
            self.on_finish(MatchDone(record, pairing, len(finished), summary.total, len(self.in_flight), self.ratings, match_id is not None))

    async def close(self) -> None:
        """Remove the signal handlers, stop the waiters and the heartbeat, abandon the matches
        still in flight (replayed next run), release the executor and retire this runner's id."""
        for sig in self.installed:
            self.loop.remove_signal_handler(sig)
        for waiter in self.waiters:
            waiter.cancel()
        if self.in_flight:
            for task in self.in_flight:
                task.cancel()
            await asyncio.gather(*self.in_flight, return_exceptions=True)
            with contextlib.suppress(Exception):  # the store may be what failed
                self.summary.abandoned += self.store.abandon(self.league_id, [p.key for p in self.in_flight.values()], "interrupted; replayed on resume", self.runner_id)
        await self.executor.close()
        retire(self.runner_id)

    def summarize(self, rerate_at_end: bool, started: float) -> LeagueSummary:
        """The run's summary, with the league's finished count from the store, after the final
        rerate (Bradley-Terry included) when asked for."""
        summary = self.summary
        summary.interrupted = self.stop.is_set()
        summary.held_elsewhere = len(self.elsewhere)
        # From the store, not this run's tally: another process may be finishing the same league.
        summary.finished = self.store.count(self.league_id, FINISHED)
        if rerate_at_end:
            from league.snapshots import rerate

            rerate(self.store, self.league_id)
        summary.elapsed_s = time.perf_counter() - started
        return summary


def _pairing(row: Any) -> Pairing:
    return Pairing(row.key, row.game_id, tuple(row.seats), int(row.seed))


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
