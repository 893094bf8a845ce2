"""kill -9 a league process at random moments, again and again, restart it with the same command,
and check that the finished league holds exactly the scheduled matches, none twice, none
half-written, and that the stored ratings equal a fresh recompute from the log."""

import random
import signal
import subprocess
import sys
import time

import pytest
from sqlalchemy import func, select

from league.config import load_config
from league.ratings import leaderboard
from league.runner import build_scheduler
from league.store import MatchRow, Store, TurnRow

CONFIG = """
name: crash-test
seed: 3
scheduler: round_robin
matches_per_pair: 20
concurrency: 6
games:
  - id: tictactoe
  - id: kuhn_poker
  - id: nim
policies:
  - {name: bot, spec: bot}
  - {name: random, spec: random}
  - {name: random-b, spec: "random,seed=b"}
"""
KILLS = 5


def _finished(store):
    with store.session() as s:
        return s.scalar(select(func.count()).select_from(MatchRow).where(MatchRow.status == "finished"))


def _command(config, db):
    return [sys.executable, "-m", "llm_arena_cli", "league", "run", str(config), "--db", db, "-q"]


@pytest.mark.slow
def test_killed_league_resumes_with_exactly_the_scheduled_matches(tmp_path):
    config = tmp_path / "league.yaml"
    config.write_text(CONFIG)
    db = f"sqlite:///{tmp_path / 'league.db'}"
    scheduler = build_scheduler(load_config(config))
    expected = {p.key: p for p in scheduler.next_pairings([], 0, scheduler.total())}
    rng = random.Random(7)
    store = Store(db)
    seen = []
    while len(seen) < KILLS and (not seen or seen[-1] < 0.7 * len(expected)):
        before = _finished(store)
        proc = subprocess.Popen(_command(config, db), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        # Wait until this run is storing matches, then kill at a random moment mid-flight.
        while _finished(store) <= before and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.3))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        seen.append(_finished(store))
    assert len(seen) >= 3 and 0 < seen[-1] < len(expected), f"the kills did not land mid-league: {seen} of {len(expected)}"
    assert seen == sorted(seen)  # finished matches only ever grow
    done = subprocess.run(_command(config, db), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr

    with store.session() as s:
        rows = s.scalars(select(MatchRow)).all()
        assert sorted(r.key for r in rows) == sorted(expected)  # none missing, none twice
        assert all(r.status == "finished" for r in rows)
        assert any(r.attempts > 1 for r in rows), "no match was in flight at any kill"
        for row in rows:
            assert tuple(row.seats) == expected[row.key].seats and row.seed == expected[row.key].seed
            turns = s.scalars(select(TurnRow.index).where(TurnRow.match_id == row.id).order_by(TurnRow.index)).all()
            assert turns and turns == list(range(len(turns))), f"match {row.key} is half-written"
    league_id = store.league_id("crash-test")
    for system in ("trueskill", "elo", "bt"):
        stored = {(r.policy, r.rating, r.lo, r.hi, r.rank) for r in store.snapshots(league_id, "", system) if r.after_matches == len(expected)}
        fresh = {(r.policy, r.rating, r.lo, r.hi, r.rank) for r in leaderboard(store.results(league_id), by=system)}
        assert stored == fresh, system
    store.close()
