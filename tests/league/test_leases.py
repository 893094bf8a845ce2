"""Leases on running matches: a second runner of a league never replays what a live runner is
playing, replays at once what a dead one (same machine) left running, and replays another
machine's matches only after their lease lapsed. On SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from sqlalchemy import func, select, update

from league.config import load_config, parse_config
from league.leases import new_runner_id, owner_is_dead, retire
from league.runner import build_scheduler, run_league
from league.scheduling import Pairing
from league.store import RUNNING, MatchRow, Store
from league.db import utcnow
from tests.league import sleepy_runner  # noqa: F401 - registers the `sleepy` kind for load_config

LEAGUE = """
name: shared
seed: 5
matches_per_pair: 5
concurrency: 4
games: [{id: tictactoe}, {id: nim}]
policies: [sleepy, bot, {name: sleepy-b, spec: "sleepy,seed=b"}]
"""


def test_a_claim_skips_live_leases_and_takes_expired_ones(store):
    league = store.open_league("claims")
    store.schedule(league, [Pairing(f"k{i}", "tictactoe", ("bot", "random"), i) for i in range(3)])
    _, mine = store.launch(league, (), ["k0", "k1"], owner="a", lease_s=60)
    assert mine == {"k0", "k1"}
    _, theirs = store.launch(league, (), ["k0", "k1", "k2"], owner="b", lease_s=60)
    assert theirs == {"k2"}  # a's matches are live: not taken
    assert {r.key for r in store.held(league, 60)} == {"k0", "k1", "k2"}
    assert store.unfinished(league, 60) == []
    with store.session() as s, s.begin():  # a's heartbeat stopped two minutes ago
        s.execute(update(MatchRow).where(MatchRow.key == "k0").values(heartbeat_at=utcnow() - timedelta(seconds=120)))
    assert store.heartbeat(league, "b") == 1  # b renews only its own
    assert [r.key for r in store.unfinished(league, 60)] == ["k0"]
    _, taken = store.launch(league, (), ["k0"], owner="b", lease_s=60)
    assert taken == {"k0"}
    assert store.abandon(league, ["k1", "k0"], owner="a") == 1  # a gives up only what it still holds
    assert store.expire_leases(league, ["b"]) == 2 and {r.key for r in store.unfinished(league, 60)} == {"k0", "k1", "k2"}
    with store.session() as s:
        assert s.scalar(select(func.sum(MatchRow.attempts))) == 4  # k0 twice, k1 and k2 once


def test_owner_is_dead_only_when_surely_gone():
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    import socket

    host = socket.gethostname()
    assert owner_is_dead(f"{host}:{done.stdout.strip()}:abc")  # exited (pid not reused this quickly)
    live = new_runner_id()
    assert not owner_is_dead(live)
    retire(live)
    assert owner_is_dead(live)  # an ended runner of this very process
    assert not owner_is_dead("another-host:1:abc") and not owner_is_dead("garbage")


def test_another_machines_running_matches_wait_for_the_lease_then_are_replayed(store):
    """A runner elsewhere (not this host: only its heartbeat tells) holds two matches; this runner
    plays the rest, waits, and replays those two once the lease lapses."""
    config = parse_config({"name": "far", "seed": 1, "matches_per_pair": 2, "concurrency": 2,
                           "games": [{"id": "tictactoe"}], "policies": ["bot", "random"]})
    league = store.open_league("far")
    scheduler = build_scheduler(config)
    pairings = scheduler.next_pairings([], 0, scheduler.total())
    store.schedule(league, pairings)
    store.launch(league, (), [pairings[0].key, pairings[1].key], owner="far-away-host:42:cafe", lease_s=60)
    start = time.monotonic()
    summary = asyncio.run(run_league(config, store, lease_seconds=1.5, rerate_at_end=False))
    assert time.monotonic() - start >= 1.0  # it waited for the lease instead of replaying at once
    assert summary.finished == len(pairings) and summary.replayed == 2 and summary.held_elsewhere == 0
    with store.session() as s:
        assert s.scalar(select(func.count()).where(MatchRow.league_id == league, MatchRow.status == "finished")) == len(pairings)


def _runner(config, url: str, lease_s: float, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.league.sleepy_runner", str(config), url, str(lease_s), *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _go(proc: subprocess.Popen) -> None:
    proc.stdin.write("go\n")
    proc.stdin.flush()


def _running(store: Store, league: str) -> int:
    league_id = store.league_id(league)
    if league_id is None:
        return 0
    with store.session() as s:
        return int(s.scalar(select(func.count()).where(MatchRow.league_id == league_id, MatchRow.status == RUNNING)) or 0)


@pytest.mark.slow
def test_two_processes_on_one_league_never_replay_each_others_live_matches(store_url, tmp_path):
    """The issue's two terminals: the second process starts while the first has matches running.
    Every match is played exactly once (attempts == matches), the second says how many it left to
    the first, and the stored league is complete."""
    config = tmp_path / "league.yaml"
    config.write_text(LEAGUE)
    store = Store(store_url)
    try:
        first, second = _runner(config, store_url, 30, "--wait"), _runner(config, store_url, 30, "--wait")
        for proc in (first, second):  # both imported and connected, so the second can start at once
            assert proc.stdout.readline().strip() == "ready", proc.communicate()[1][-2000:]
        _go(first)
        deadline = time.monotonic() + 60
        while _running(store, "shared") == 0:
            assert first.poll() is None, first.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the first runner never started a match"
            time.sleep(0.05)
        _go(second)
        outputs = [p.communicate(timeout=240) for p in (first, second)]
        for proc, (_out, err) in zip((first, second), outputs):
            assert proc.returncode == 0, err[-3000:]
        summaries = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
        scheduler = build_scheduler(load_config(config))
        expected = {p.key for p in scheduler.next_pairings([], 0, scheduler.total())}
        with store.session() as s:
            rows = s.scalars(select(MatchRow).where(MatchRow.league_id == store.league_id("shared"))).all()
        assert sorted(r.key for r in rows) == sorted(expected) and all(r.status == "finished" for r in rows)
        assert sum(r.attempts for r in rows) == len(expected), "a live match was replayed"
        assert sum(m["played_now"] for m in summaries) == len(expected)
        assert all(m["replayed"] == 0 for m in summaries)
        assert summaries[1]["held_elsewhere"] > 0, summaries  # the second met the first's live matches and said so
        assert {r.owner.split(":")[1] for r in rows} <= {str(first.pid), str(second.pid)}
    finally:
        store.close()


@pytest.mark.slow
def test_a_killed_runners_matches_are_replayed_at_once_on_the_same_machine(store_url, tmp_path):
    """kill -9 leaves matches `running` with a fresh heartbeat; a runner on the same machine sees
    the owner's process is gone and replays them without waiting out the (long) lease."""
    config = tmp_path / "league.yaml"
    config.write_text(LEAGUE)
    store = Store(store_url)
    try:
        first = _runner(config, store_url, 600)
        deadline = time.monotonic() + 60
        while _running(store, "shared") == 0:
            assert first.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        first.kill()
        first.wait()
        left_running = _running(store, "shared")
        assert left_running > 0
        start = time.monotonic()
        second = _runner(config, store_url, 600)
        out, err = second.communicate(timeout=240)
        assert second.returncode == 0, err[-3000:]
        summary = json.loads(out.strip().splitlines()[-1])
        assert summary["replayed"] >= left_running and summary["held_elsewhere"] == 0
        assert time.monotonic() - start < 300  # not the 600 s lease
        assert _running(store, "shared") == 0
    finally:
        store.close()


@pytest.mark.slow  # a runner process's imports, then its sleepy Connect Four matches (~10 s)
def test_arena_league_run_says_what_it_left_to_another_runner(tmp_path):
    """Through the CLI, as a user on a second terminal meets it: a runner process has claimed
    every match of the league; `arena league run` plays none of them, waits for them, and its
    summary line says they were left to the other runner, not replayed."""
    from typer.testing import CliRunner

    from llm_arena_cli.app import app

    config = tmp_path / "league.yaml"
    # Two Connect Four matches between sleepy policies: each takes seconds, and the first runner
    # claims both at once (concurrency 4), so the CLI finds every match held.
    config.write_text("name: held\nseed: 3\nmatches_per_pair: 2\nconcurrency: 4\ngames: [{id: connect_four}]\n"
                      "policies: [sleepy, {name: sleepy-b, spec: \"sleepy,seed=b\"}]\n")
    url = f"sqlite:///{tmp_path / 'held.db'}"
    store = Store(url)
    try:
        first = _runner(config, url, 30, "--wait")
        assert first.stdout.readline().strip() == "ready", first.communicate()[1][-2000:]
        _go(first)
        deadline = time.monotonic() + 60
        while _running(store, "held") < 2:
            assert first.poll() is None, first.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the first runner never started its matches"
            time.sleep(0.05)
        result = CliRunner().invoke(app, ["league", "run", str(config), "--db", url, "-q"], terminal_width=300)
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err[-3000:]
        assert result.exit_code == 0, result.output
        assert "held: 2 matches stored (0 played now, 2 found running under another runner and left to it, not replayed)" in result.output, result.output
        assert json.loads(out.strip().splitlines()[-1])["played_now"] == 2
        with store.session() as s:
            assert s.scalar(select(func.sum(MatchRow.attempts)).where(MatchRow.league_id == store.league_id("held"))) == 2
    finally:
        store.close()
