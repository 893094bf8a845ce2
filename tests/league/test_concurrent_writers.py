"""Several league processes writing to ONE PostgreSQL store at the same time lose nothing: two
processes run the same league (they race for every match) while a third runs another league.
They start on an empty database, so they also race to create the schema, the games and the
policies. Each league ends with exactly its schedule, every match once with all its turns, and every
match stored by exactly one of the processes that played it."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from sqlalchemy import func, select

from league.config import load_config
from league.runner import build_scheduler
from league.store import MatchRow, Store, TurnRow
from tests.league.conftest import reset_postgres
from tests.services import postgres_url

LEAGUE = """
name: {name}
seed: {seed}
matches_per_pair: 4
concurrency: 6
games: [{{id: tictactoe}}, {{id: nim}}, {{id: kuhn_poker}}]
policies: [bot, random, {{name: random-b, spec: "random,seed=b"}}]
"""
SUMMARY = re.compile(r"^(?P<league>\S+): (?P<finished>\d+) matches stored \((?P<now>\d+) played now", re.MULTILINE)


@pytest.mark.slow
@pytest.mark.postgres
def test_concurrent_leagues_on_one_postgres_store_lose_nothing(tmp_path):
    url = postgres_url()
    reset_postgres(url)
    files = {}
    for name, seed in (("shared", 1), ("other", 2)):
        files[name] = tmp_path / f"{name}.yaml"
        files[name].write_text(LEAGUE.format(name=name, seed=seed))
    command = [sys.executable, "-m", "llm_arena_cli", "league", "run"]
    procs = [subprocess.Popen([*command, str(files[name]), "--db", url, "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name in ("shared", "shared", "other")]
    outputs = [p.communicate(timeout=300) for p in procs]
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
    summaries = [SUMMARY.search(out) for out, _ in outputs]
    assert all(summaries), outputs

    store = Store(url)
    try:
        for name in ("shared", "other"):
            scheduler = build_scheduler(load_config(files[name]))
            expected = {p.key: p for p in scheduler.next_pairings([], 0, scheduler.total())}
            league_id = store.league_id(name)
            with store.session() as s:
                rows = s.scalars(select(MatchRow).where(MatchRow.league_id == league_id)).all()
                assert sorted(r.key for r in rows) == sorted(expected)  # none missing, none twice
                assert all(r.status == "finished" for r in rows)
                for row in rows:
                    assert (tuple(row.seats), row.seed) == (expected[row.key].seats, expected[row.key].seed)
                    turns = s.scalars(select(TurnRow.index).where(TurnRow.match_id == row.id).order_by(TurnRow.index)).all()
                    assert turns and turns == list(range(len(turns))), f"{name}/{row.key}: turns missing or written twice"
            runs = [m for m in summaries if m["league"] == name]
            assert all(int(m["finished"]) == len(expected) for m in runs)
            # each match was stored by exactly one process, however many played it
            assert sum(int(m["now"]) for m in runs) == len(expected) == 36
        with store.session() as s:
            assert s.scalar(select(func.count()).select_from(MatchRow)) == 72
    finally:
        store.close()
        reset_postgres(url)
