"""`arena export --kind battles`: LMArena's battle rows, one per pairwise result, expanded from
N-player matches exactly as our ratings expand them."""

import json

from league.battles import battle_rows
from league.export import EXPORTERS
from league.results import GameResult
from league.scheduling import Pairing
from league.store import Store
from arena.match import MatchRecord

LOG = [
    GameResult("m1", "tictactoe", ("x", "y"), (1, 2)),
    GameResult("m2", "tictactoe", ("x", "y"), (2, 1)),
    GameResult("m3", "tictactoe", ("y", "x"), (1, 1)),
    # three distinct policies, "z" in two seats (counted once at its best rank), b and z tied
    GameResult("m4", "liars_dice", ("z", "b", "a", "z"), (2, 2, 1, 4)),
    GameResult("m5", "tictactoe", ("x", "x"), (1, 2)),  # self-play: nothing to compare
]


def test_rows_follow_the_pairwise_expansion():
    rows = list(battle_rows(LOG))
    assert [(r["model_a"], r["model_b"], r["winner"], r["match_id"], r["game_id"]) for r in rows] == [
        ("x", "y", "model_a", "m1", "tictactoe"),
        ("x", "y", "model_b", "m2", "tictactoe"),
        ("y", "x", "tie", "m3", "tictactoe"),
        ("z", "b", "tie", "m4", "liars_dice"),
        ("z", "a", "model_b", "m4", "liars_dice"),
        ("b", "a", "model_b", "m4", "liars_dice"),
    ]
    assert [r["weight"] for r in rows] == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5]


def test_export_from_a_store(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    league = store.open_league("battles")
    store.schedule(league, [Pairing(r.match_id, r.game_id, r.players, 0) for r in LOG])
    for r in LOG:
        record = MatchRecord(r.match_id, r.game_id, len(r.players), 0, list(r.players), ["random"] * len(r.players),
                             turns=[], outcome={"ranks": list(r.ranks), "scores": [0] * len(r.players), "reason": "test"}, status="finished")
        store.finish(league, r.match_id, record)
    out = tmp_path / "battles.jsonl"
    assert EXPORTERS["battles"](store, out, league_id=league) == 6
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == list(battle_rows(store.results(league)))
    assert EXPORTERS["battles"](store, out, game="liars_dice") == 3
    store.close()
