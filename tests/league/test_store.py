"""The store on SQLite and PostgreSQL: exactly-once finishing, full turns, ordering, no secrets."""

import asyncio
import threading

from arena.match import play_match
from arena.policy import make_policy
from games.registry import make_game
from league.scheduling import Pairing


def _record(key, seats=("bot", "random"), seed=0):
    policies = [make_policy("bot"), make_policy("random")]
    for p, name in zip(policies, seats):
        p.name = name
    return asyncio.run(play_match(make_game("tictactoe"), policies, seed, match_id=key))


def test_schedule_finish_once_and_read_back(store):
    league = store.league_id("l1", {"seed": 1})
    pairings = [Pairing(f"k{i}", "tictactoe", ("bot", "random"), i) for i in range(3)]
    store.schedule(league, pairings)
    store.schedule(league, pairings)  # re-scheduling existing keys changes nothing
    assert store.count(league) == 3 and len(store.unfinished(league)) == 3
    record = _record("k0")
    assert store.finish(league, "k0", record) is True
    assert store.finish(league, "k0", record) is False  # a second writer of the same key is a no-op
    assert store.count(league, "finished") == 1
    [result] = store.results(league)
    assert result.players == ("bot", "random") and result.ranks == tuple(record.outcome["ranks"])
    back = store.match_record(int(result.match_id))
    assert [t.action for t in back.turns] == [t.action for t in record.turns]
    assert back.turns[0].observation == record.turns[0].observation


def test_concurrent_writers_finish_each_match_once(store):
    league = store.league_id("race")
    store.schedule(league, [Pairing(f"k{i}", "tictactoe", ("bot", "random"), i) for i in range(10)])
    records = {f"k{i}": _record(f"k{i}", seed=i) for i in range(10)}
    wins = []

    def writer():
        for key, record in records.items():
            wins.append(store.finish(league, key, record))

    threads = [threading.Thread(target=writer) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(wins) == 10 and store.count(league, "finished") == 10


def test_policies_never_store_secrets(store):
    store.upsert_policy("gpt", "openai:gpt-4o-mini", {"api_key": "sk-secret", "note": "fine", "AUTH_TOKEN": "x"})
    [row] = store.policies()
    assert row.meta == {"note": "fine"}
    assert store.remove_policy("gpt") and not store.remove_policy("gpt")
