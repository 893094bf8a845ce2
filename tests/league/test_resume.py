"""kill -9 a league at random moments, restart it, and check nothing was lost or counted twice."""

import os
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
from league.store import MatchRow, RatingSnapshotRow, Store, TurnRow

CONFIG = """
name: crash-test
seed: 3
scheduler: round_robin
matches_per_pair: 60
concurrency: 6
games:
  - id: tictactoe
  - id: connect_four
  - id: nim
policies:
  - {name: bot, spec: bot}
  - {name: random, spec: random}
  - {name: random-b, spec: "random,seed=b"}
"""


def _run(config, db, kill_after=None):
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "league", "run", str(config), "--db", db, "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    if kill_after is None:
        out, errors = proc.communicate(timeout=300)
        assert proc.returncode == 0, errors
        return out
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return None


@pytest.mark.slow
def test_killed_league_resumes_with_exactly_the_scheduled_matches(tmp_path):
    config = tmp_path / "league.yaml"
    config.write_text(CONFIG)
    db = f"sqlite:///{tmp_path / 'league.db'}"
    rng = random.Random(7)
    store = Store(db)
    seen = []
    for _ in range(5):
        _run(config, db, kill_after=rng.uniform(1.2, 2.5))
        with store.session() as s:
            seen.append(s.scalar(select(func.count()).where(MatchRow.status == "finished")))
    total = len(build_scheduler(load_config(config)).plan)
    assert 0 < seen[-1] < total, f"the kills did not land mid-league: {seen} of {total}"
    _run(config, db)

    expected = build_scheduler(load_config(config)).plan
    with store.session() as s:
        rows = s.scalars(select(MatchRow)).all()
        assert sorted(r.key for r in rows) == sorted(p.key for p in expected)  # none missing, none twice
        assert all(r.status == "finished" for r in rows)
        by_key = {p.key: p for p in expected}
        for row in rows:
            assert tuple(row.seats) == by_key[row.key].seats and row.seed == by_key[row.key].seed
            turns = s.scalars(select(TurnRow.index).where(TurnRow.match_id == row.id).order_by(TurnRow.index)).all()
            assert turns == list(range(len(turns))) and turns, f"match {row.key} is half-written"
        stored = {(r.policy): (r.rating, r.lo, r.hi) for r in s.scalars(
            select(RatingSnapshotRow).where(RatingSnapshotRow.game_id == "", RatingSnapshotRow.system == "bt",
                                            RatingSnapshotRow.after_matches == len(expected)))}
    fresh = {r.policy: (r.rating, r.lo, r.hi) for r in leaderboard(store.results(), by="bt")}
    assert stored == fresh
    assert seen == sorted(seen)  # finished matches only ever grow
