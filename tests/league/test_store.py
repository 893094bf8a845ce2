"""The store on SQLite and PostgreSQL: exactly-once finishing, all-or-nothing writes, the match
lifecycle, full turns read back, migrations that match the models, no secrets."""

import asyncio
import multiprocessing
import threading

import pytest
from sqlalchemy import func, select

from arena.match import MatchRecord, play_match
from arena.policy import make_policy
from games.registry import make_game
from league import store as store_module
from league.db import current_revision, head_revision
from league.scheduling import Pairing
from league.store import MatchRow, Store, StoreError, TurnRow, scrub


def _record(key, seats=("bot", "random"), seed=0, game="tictactoe"):
    policies = [make_policy("bot"), make_policy("random")]
    for p, name in zip(policies, seats):
        p.name = name
    return asyncio.run(play_match(make_game(game), policies, seed, match_id=key))


def _pairings(n, seed_base=0):
    return [Pairing(f"k{i}", "tictactoe", ("bot", "random"), seed_base + i) for i in range(n)]


def test_schedule_finish_once_and_read_back_every_field(store):
    league = store.open_league("l1", {"seed": 1}, "h1")
    assert store.schedule(league, _pairings(3)) == 3
    assert store.schedule(league, _pairings(3)) == 0  # re-scheduling existing keys changes nothing
    assert store.count(league) == 3 and len(store.unfinished(league)) == 3
    record = _record("k0")
    match_id = store.finish(league, "k0", record)
    assert match_id is not None
    assert store.finish(league, "k0", record) is None  # a second writer of the same key is a no-op
    assert store.count(league, "finished") == 1
    [result] = store.results(league)
    assert result.players == ("bot", "random") and result.ranks == tuple(record.outcome["ranks"])
    back = store.match_record(int(result.match_id))
    assert back.turns == record.turns  # every TurnRecord field survives the round trip
    assert back.outcome == record.outcome and back.specs == record.specs and back.final_views == record.final_views
    with store.session() as s:
        assert s.scalar(select(func.count()).select_from(TurnRow)) == len(record.turns)


def test_lifecycle_running_abandoned_aborted(store):
    league = store.open_league("life")
    store.schedule(league, _pairings(4))
    store.start(league, ["k0", "k1"])
    assert store.status_counts(league) == {"running": 2, "scheduled": 2}
    assert store.abandon(league, ["k1"]) == 1
    assert {r.key: r.status for r in store.unfinished(league)} == {"k0": "running", "k1": "abandoned", "k2": "scheduled", "k3": "scheduled"}
    store.start(league, ["k1"])
    with store.session() as s:
        assert s.scalar(select(MatchRow.attempts).where(MatchRow.key == "k1")) == 2  # replays are counted
    assert store.finish(league, "k1", _record("k1", seed=1)) is not None  # an abandoned match can finish on replay
    stuck = MatchRecord("k2", "tictactoe", 2, 2, ["bot", "random"], ["bot", "random"], status="aborted")
    assert store.finish(league, "k2", stuck) is not None
    assert store.status_counts(league) == {"running": 1, "finished": 1, "aborted": 1, "scheduled": 1}
    assert [r.key for r in store.unfinished(league)] == ["k0", "k3"]  # aborted is final, not replayed
    assert len(store.results(league)) == 1  # only matches with a result are rated


def test_a_failed_finish_writes_nothing(store, monkeypatch):
    league = store.open_league("atomic")
    store.schedule(league, _pairings(1))
    record = _record("k0")
    calls = {"n": 0}
    real = store_module._turn_columns

    def failing(match_id, turn, mask=None):
        calls["n"] += 1
        if calls["n"] == len(record.turns):  # the very last turn: everything else is already staged
            raise RuntimeError("disk on fire")
        return real(match_id, turn, mask)

    monkeypatch.setattr(store_module, "_turn_columns", failing)
    with pytest.raises(RuntimeError):
        store.finish(league, "k0", record)
    with store.session() as s:
        assert s.scalar(select(MatchRow.status)) == "scheduled"
        assert s.scalar(select(func.count()).select_from(TurnRow)) == 0
    monkeypatch.setattr(store_module, "_turn_columns", real)
    assert store.finish(league, "k0", record) is not None


def test_concurrent_writers_finish_each_match_once(store_url):
    stores = [Store(store_url) for _ in range(3)]  # separate engines, like separate processes
    league = stores[0].open_league("race")
    stores[0].schedule(league, _pairings(10))
    records = {f"k{i}": _record(f"k{i}", seed=i) for i in range(10)}
    wins = []

    def writer(store):
        for key, record in records.items():
            wins.append(store.finish(league, key, record) is not None)

    threads = [threading.Thread(target=writer, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(wins) == 10 and stores[0].count(league, "finished") == 10
    with stores[0].session() as s:
        assert s.scalar(select(func.count()).select_from(TurnRow)) == sum(len(r.turns) for r in records.values())
    for s in stores:
        s.close()


def _process_writer(url, keys, out):
    store = Store(url)
    league = store.open_league("procs")
    store.schedule(league, _pairings(len(keys)))
    out.put(sum(store.finish(league, key, _record(key, seed=int(key[1:]))) is not None for key in keys))
    store.close()


def test_processes_share_a_fresh_sqlite_file(tmp_path):
    """Three processes open the same new file at once (migration race), schedule the same keys
    and finish the same matches: every match is stored exactly once."""
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    queue = multiprocessing.get_context("fork").Queue()
    keys = [f"k{i}" for i in range(8)]
    procs = [multiprocessing.get_context("fork").Process(target=_process_writer, args=(url, keys, queue)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert sum(queue.get() for _ in procs) == 8
    store = Store(url)
    assert store.count(store.league_id("procs")) == 8 and store.count(None, "finished") == 8


def test_big_seeds_and_unicode_survive(store):
    league = store.open_league("seeds")
    store.schedule(league, [Pairing("big", "tictactoe", ("bot", "random"), 2**32 - 1)])
    record = _record("big", seed=2**32 - 1)
    record.turns[0].raw = "déjà vu ✓ " + "x" * 100
    store.finish(league, "big", record)
    back = store.match_record(int(store.results(league)[0].match_id))
    assert back.seed == 2**32 - 1 and back.turns[0].raw.startswith("déjà vu ✓")


def test_policies_never_store_secrets(store):
    meta = {"api_key": "sk-secret", "note": "fine", "AUTH_TOKEN": "x", "nested": {"password": "p", "ok": 1}, "pasted": "sk-abc123"}
    store.upsert_policy("gpt", "openai:gpt-4o-mini", meta, "GPT-4o mini")
    [row] = store.policies()
    assert row.meta == {"note": "fine", "nested": {"ok": 1}, "pasted": "***"} and row.display_name == "GPT-4o mini"
    assert scrub(["Bearer abcdef123", "plain"]) == ["Bearer ***", "plain"]
    with pytest.raises(StoreError, match="already registered with spec"):
        store.upsert_policy("gpt", "openai:gpt-4o")  # a name keeps the spec its matches were played with
    store.upsert_policy("gpt", "openai:gpt-4o", replace=True)
    assert store.policy("gpt").spec == "openai:gpt-4o"
    assert store.remove_policy("gpt") and not store.remove_policy("gpt")


def test_league_config_is_scrubbed_and_schedule_changes_refused(store):
    league = store.open_league("cfg", {"name": "cfg", "provider_limits": {"openai": 2}, "token": "t"}, "hash-a")
    assert store.open_league("cfg", {}, "hash-a") == league
    assert "token" not in store.leagues()[0].config
    with pytest.raises(StoreError, match="different schedule"):
        store.open_league("cfg", {}, "hash-b")


def test_a_fixed_schedules_match_keys_are_kept_and_secrets_still_dropped():
    """`key` names a secret in a policy's settings, but a fixed schedule's `matches[].key` is the
    pairing's id: without it the stored config no longer parses and `league status` is wrong."""
    config = {
        "api_key": "sk-abcdefghijklmnop1234", "scheduler": "fixed",
        "matches": [{"key": "tictactoe:1:seat0", "game": "tictactoe", "seats": ["a", "b"], "seed": 1, "token": "t"},
                    {"key": "Bearer abcdef123", "game": "tictactoe", "seats": ["b", "a"], "seed": 1}],
        "policies": [{"name": "a", "spec": "random", "meta": {"key": "hidden"}}],
    }
    assert scrub(config) == {
        "scheduler": "fixed",
        "matches": [{"key": "tictactoe:1:seat0", "game": "tictactoe", "seats": ["a", "b"], "seed": 1},
                    {"key": "Bearer ***", "game": "tictactoe", "seats": ["b", "a"], "seed": 1}],
        "policies": [{"name": "a", "spec": "random", "meta": {}}],
    }


def test_snapshots_replace_and_checkpoints_never_double(store):
    league = store.open_league("snap")
    row = {"game_id": "", "system": "elo", "after_matches": 10, "policy": "bot", "rating": 1.0, "lo": 1.0, "hi": 1.0, "rank": 1, "games": 3}
    store.add_snapshots(league, [row])
    store.add_snapshots(league, [{**row, "rating": 2.0}])  # a resumed run rewrites the same checkpoint
    assert [s.rating for s in store.snapshots(league, "", "elo")] == [2.0]
    store.replace_snapshots(league, [{**row, "after_matches": 20}])
    assert [s.after_matches for s in store.snapshots(league, "", "elo")] == [20]


def test_migrations_match_the_models_and_open_is_idempotent(store):
    """`alembic check`: the newest revision creates exactly what the models describe."""
    from alembic import command

    from league.db import _alembic_config

    assert current_revision(store.engine) == head_revision()
    with store.engine.connect() as connection:
        command.check(_alembic_config(connection))
    again = Store(store.url)  # already at head: opens without migrating
    assert current_revision(again.engine) == head_revision()
    again.close()


_KILL_MID_MIGRATION = """
import os, sys
from sqlalchemy import event
from league import db

real = db.make_engine
def make_engine(url):
    engine = real(url)
    @event.listens_for(engine, "before_cursor_execute")
    def die(conn, cursor, statement, *args):
        if statement.lstrip().startswith("CREATE TABLE matches"):  # games and leagues exist by now
            os._exit(9)  # as SIGKILL: no rollback, no cleanup
    return engine
db.make_engine = make_engine
from league.store import Store
Store(sys.argv[1])
"""


def test_a_process_killed_while_creating_the_store_leaves_it_openable(tmp_path):
    """Each SQLite CREATE TABLE used to commit on its own, so a kill half-way through the first
    migration left tables without a version row and every later open failed ("table games
    already exists"). The migration is one transaction now: the killed one leaves nothing."""
    import subprocess
    import sys

    url = f"sqlite:///{tmp_path / 'league.db'}"
    killed = subprocess.run([sys.executable, "-c", _KILL_MID_MIGRATION, url], capture_output=True, text=True, timeout=120)
    assert killed.returncode == 9, killed.stderr[-2000:]
    reopened = Store(url)
    assert current_revision(reopened.engine) == head_revision()
    assert reopened.open_league("after-the-kill") is not None
    reopened.close()


def test_a_store_left_half_created_by_an_older_release_is_one_line(tmp_path):
    """Files broken before the migration was one transaction: tables, no version row."""
    from sqlalchemy import create_engine

    from league.cli.store_option import open_store
    from arena.user_errors import UsageError

    path = tmp_path / "half.db"
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        connection.exec_driver_sql("CREATE TABLE games (id INTEGER PRIMARY KEY)")
    engine.dispose()
    with pytest.raises(UsageError) as error:
        open_store(f"sqlite:///{path}")
    message = str(error.value)
    assert "no schema version" in message and "move it aside" in message and "\n" not in message
