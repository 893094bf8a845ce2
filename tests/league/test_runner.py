"""The runner: plays exactly the schedule, respects global and per-provider limits, shares one
policy object per entry, survives failing policies and games, stops gracefully and resumes."""

import asyncio

import pytest

from arena.policy import Policy, PolicyReply, register_kind
from league.config import GameEntry, LeagueConfig, PolicyEntry
from league.ratings import leaderboard
from league.runner import LeagueError, run_league
from league.store import StoreError
from tests.league.conftest import scheduled_keys

IN_FLIGHT = {"now": 0, "max": 0, "built": 0}


class SlowRandom(Policy):
    """A random mover that takes its time, on a provider named by the spec target."""

    def __init__(self, provider: str, delay: float) -> None:
        self.provider, self.delay = provider, delay

    async def act(self, request):
        IN_FLIGHT["now"] += 1
        IN_FLIGHT["max"] = max(IN_FLIGHT["max"], IN_FLIGHT["now"])
        try:
            await asyncio.sleep(self.delay)
        finally:
            IN_FLIGHT["now"] -= 1
        import random

        move = request.random_move(random.Random(request.observation.turn))
        return PolicyReply(action=move, raw=move)


class Broken(Policy):
    async def act(self, request):
        raise RuntimeError("the provider exploded")


def _slow(spec):
    IN_FLIGHT["built"] += 1
    return SlowRandom(spec.target or "slowprov", float(spec.params.get("delay", "0.002")))


register_kind("test-slow", _slow, "test-slow:PROVIDER")
register_kind("test-broken", lambda spec: Broken(), "test-broken")


def _config(**overrides):
    base = dict(
        name="t", seed=1, matches_per_pair=3, concurrency=4,
        games=[GameEntry(id="tictactoe"), GameEntry(id="nim")],
        policies=[PolicyEntry(name="bot", spec="bot"), PolicyEntry(name="random", spec="random"), PolicyEntry(name="random-b", spec="random,seed=b")],
    )
    base.update(overrides)
    return LeagueConfig(**base)


async def test_plays_exactly_the_schedule_and_ratings_match_recompute(store):
    config = _config()
    seen = []
    summary = await run_league(config, store, on_finish=lambda done: seen.append(done))
    keys = scheduled_keys(config)
    assert summary.finished == summary.total == len(keys) == 18 and summary.played_now == 18
    with store.session() as s:
        from sqlalchemy import select

        from league.store import MatchRow

        rows = s.scalars(select(MatchRow)).all()
    assert {r.key for r in rows} == keys and all(r.status == "finished" for r in rows)
    assert max(done.in_flight for done in seen) >= 1
    live = seen[-1].ratings
    for by in ("trueskill", "elo"):
        assert [(r.policy, round(r.rating, 9)) for r in live.rows(by, None)] == [
            (r.policy, round(r.rating, 9)) for r in leaderboard(store.results(), by=by, bootstrap=0)
        ]
    final = {s.policy: (s.rating, s.lo, s.hi) for s in store.snapshots(summary.league_id, "", "bt") if s.after_matches == 18}
    assert final == {r.policy: (r.rating, r.lo, r.hi) for r in leaderboard(store.results(), by="bt")}
    again = await run_league(config, store)  # a finished league replays nothing
    assert again.played_now == 0 and again.replayed == 0 and store.count() == 18


async def test_global_and_provider_limits_hold_and_policies_are_built_once(sqlite_store):
    IN_FLIGHT.update(now=0, max=0, built=0)
    config = _config(
        concurrency=6, matches_per_pair=4, provider_limits={"slowprov": 2},
        policies=[PolicyEntry(name="a", spec="test-slow:slowprov,delay=0.01"), PolicyEntry(name="b", spec="test-slow:slowprov,delay=0.01,x=1"), PolicyEntry(name="c", spec="random")],
    )
    summary = await run_league(config, sqlite_store)
    assert summary.finished == summary.total
    assert IN_FLIGHT["built"] == 2  # one object per entry, shared by all its matches
    assert IN_FLIGHT["max"] == 2  # both slots used, never more: every match has a slowprov seat


async def test_failing_policy_still_ends_its_matches(sqlite_store):
    config = _config(policies=[PolicyEntry(name="broken", spec="test-broken"), PolicyEntry(name="random", spec="random")], games=[GameEntry(id="tictactoe")])
    summary = await run_league(config, sqlite_store)
    assert summary.finished == summary.total == 3
    record = sqlite_store.match_record(int(sqlite_store.results()[0].match_id))
    assert any("the provider exploded" in (t.error or "") for t in record.turns)
    assert all(r.ranks[r.players.index("broken")] == 2 for r in sqlite_store.results())


async def test_game_errors_end_as_aborted_not_replayed(sqlite_store, monkeypatch):
    import games.nim as nim

    def explode(self, player, action):
        raise ZeroDivisionError("bug in the game")

    monkeypatch.setattr(nim.Nim, "step", explode)
    summary = await run_league(_config(), sqlite_store)
    assert summary.aborted == 9 and summary.finished == 9
    assert sqlite_store.status_counts(summary.league_id) == {"finished": 9, "aborted": 9}
    assert (await run_league(_config(), sqlite_store)).played_now == 0


async def test_stop_abandons_in_flight_and_a_rerun_completes_exactly_once(sqlite_store):
    config = _config(
        concurrency=3, matches_per_pair=4, grace_seconds=0,
        policies=[PolicyEntry(name="a", spec="test-slow:p,delay=0.02"), PolicyEntry(name="b", spec="random")],
    )
    stop = asyncio.Event()

    def halt(done):
        if done.finished >= 2:
            stop.set()

    first = await run_league(config, sqlite_store, on_finish=halt, stop=stop)
    assert first.interrupted and first.abandoned >= 1 and first.finished < first.total
    assert sqlite_store.status_counts(first.league_id).get("abandoned") == first.abandoned
    second = await run_league(config, sqlite_store)
    assert second.replayed >= first.abandoned and second.finished == second.total == 8
    assert {r.key for r in sqlite_store.unfinished(second.league_id)} == set()
    assert sorted(sqlite_store.results(), key=lambda r: r.match_id) == sorted(set(sqlite_store.results()), key=lambda r: r.match_id)


async def test_a_changed_schedule_or_unbuildable_policy_is_refused(sqlite_store):
    await run_league(_config(), sqlite_store)
    with pytest.raises(StoreError, match="different schedule"):
        await run_league(_config(matches_per_pair=5), sqlite_store)
    await run_league(_config(concurrency=2, move_timeout=5), sqlite_store)  # pace settings may change
    with pytest.raises(LeagueError, match=r"policies\[1\]\.spec"):
        await run_league(_config(name="other", policies=[PolicyEntry(spec="bot"), PolicyEntry(spec="random,bogus=1")]), sqlite_store)


async def test_a_match_the_executor_loses_is_abandoned_and_replayed_next_run(sqlite_store):
    """MatchLost (or any executor failure) is no result: the match stays unfinished, the rest of
    the league goes on, and the next run plays exactly the lost matches."""
    from league.runner import InProcessExecutor, MatchLost

    config = _config(matches_per_pair=2)
    keys = sorted(scheduled_keys(config))

    class Flaky(InProcessExecutor):
        async def play(self, pairing):
            if pairing.key == keys[0]:
                raise MatchLost(f"match {pairing.key} lost 3 times; last: worker died")
            if pairing.key == keys[1]:
                raise RuntimeError("executor bug")
            return await super().play(pairing)

    first = await run_league(config, sqlite_store, executor=Flaky(config))
    assert first.abandoned == 2 and first.finished == first.total - 2 and not first.interrupted
    reasons = {r.key: r.reason for r in sqlite_store.unfinished(first.league_id)}
    assert set(reasons) == {keys[0], keys[1]}
    assert reasons[keys[0]].startswith("match ") and "worker died" in reasons[keys[0]] and "executor error: RuntimeError" in reasons[keys[1]]
    second = await run_league(config, sqlite_store)
    assert second.replayed == 2 and second.played_now == 2 and second.finished == second.total == len(keys)
