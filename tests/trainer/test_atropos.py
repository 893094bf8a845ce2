"""Atropos scored groups from stored matches, pushed through `arena export --kind atropos --push`
to the unmodified Atropos hub (`atroposlib`'s run-api on 127.0.0.1) and read back the way a
trainer reads them (POST /register, GET /batch): group sizes, exact token ids, prompt masks and
scores from our reward functions."""

import json

import httpx
import pytest
from typer.testing import CliRunner

from arena.match import MatchRecord, TurnRecord
from league.scheduling import Pairing
from league.store import Store
from llm_arena_cli.app import app
from tests.local_server import free_port
from tests.trainer.conftest import REGISTRATION
from trainer.atropos import IGNORE, scored_groups

def _turn(index, player, prompt, completion, valid=True):
    meta = {"prompt_ids": prompt, "completion_ids": completion} if player == 0 else {}  # seat 1 is a bot: no ids
    return TurnRecord(index=index, player=player, policy=f"p{player}", turn=index, attempt=0, observation=f"obs{index}",
                      legal_moves=None, raw="move", action="move", valid=valid, meta=meta)


def _match(key, seed, ranks, turns):
    return MatchRecord(key, "tictactoe", 2, seed, ["learner", "bot"], ["hf:x+a", "bot"], turns=turns,
                       outcome={"ranks": ranks, "scores": [0, 0], "reason": "test"}, status="finished")


# two seeds, each played twice; seat 0 has two turns per match with exact ids
MATCHES = [
    _match("m1", 0, [1, 2], [_turn(0, 0, [1, 2, 3], [7, 8]), _turn(1, 1, [], []), _turn(2, 0, [1, 2, 3, 4], [9])]),
    _match("m2", 0, [2, 1], [_turn(0, 0, [1, 2, 3], [5]), _turn(1, 1, [], []), _turn(2, 0, [1, 2, 3, 5], [6, 6, 6])]),
    _match("m3", 1, [1, 1], [_turn(0, 0, [4, 4], [1], valid=False), _turn(1, 0, [4, 4], [2]), _turn(2, 1, [], [])]),
    _match("m4", 1, [1, 2], [_turn(0, 0, [4, 4], [3]), _turn(1, 1, [], []), _turn(2, 0, [4, 4, 9], [3, 3])]),
]
# outcome (+1 win, 0 draw, -1 loss) + 0.5 x (minus the share of rejected attempts)
SCORES = {"m1": 1.0, "m2": -1.0, "m3": -0.25, "m4": 1.0}


def test_groups_hold_exact_ids_masks_and_rewards():
    groups = list(scored_groups(MATCHES))
    assert [(g["game_id"], g["seed"], g["seat"], len(g["tokens"])) for g in groups] == [("tictactoe", 0, 0, 4), ("tictactoe", 1, 0, 4)]
    first = groups[0]
    assert first["tokens"] == [[1, 2, 3, 7, 8], [1, 2, 3, 4, 9], [1, 2, 3, 5], [1, 2, 3, 5, 6, 6, 6]]
    assert first["masks"] == [[IGNORE] * 3 + [7, 8], [IGNORE] * 4 + [9], [IGNORE] * 3 + [5], [IGNORE] * 4 + [6, 6, 6]]
    assert first["scores"] == [SCORES["m1"]] * 2 + [SCORES["m2"]] * 2
    assert groups[1]["scores"] == [SCORES["m3"]] * 2 + [SCORES["m4"]] * 2


@pytest.mark.slow
def test_push_to_the_atropos_hub_and_read_the_batch(hub, tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'a.db'}")
    league = store.open_league("rollouts")
    store.schedule(league, [Pairing(m.match_id, m.game_id, tuple(m.policies), m.seed) for m in MATCHES])
    for m in MATCHES:
        store.finish(league, m.match_id, m)
    store.close()
    assert "uuid" in httpx.post(hub + "/register", json=REGISTRATION).json()
    out = tmp_path / "groups.jsonl"
    result = CliRunner().invoke(app, ["export", "--kind", "atropos", "--out", str(out), "--push", hub, "--db", f"sqlite:///{tmp_path / 'a.db'}"])
    assert result.exit_code == 0 and "2 atropos groups (8 samples)" in result.output, result.output
    batch = httpx.get(hub + "/batch").json()["batch"]
    assert batch is not None and sorted(len(g["tokens"]) for g in batch) == [4, 4]
    written = {json.dumps(g["tokens"]): g for g in map(json.loads, out.read_text().splitlines())}
    expected = {json.dumps(g["tokens"]): g for g in scored_groups(MATCHES)}
    assert set(written) == set(expected)
    for group in batch:
        want = expected[json.dumps(group["tokens"])]
        assert group["masks"] == want["masks"] and group["scores"] == want["scores"]
        for tokens, masks in zip(group["tokens"], group["masks"]):
            assert len(tokens) == len(masks) and masks[-1] == tokens[-1] and IGNORE in masks


def test_export_without_token_ids_says_what_is_missing(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'b.db'}")
    league = store.open_league("bots")
    bare = _match("b1", 0, [1, 2], [_turn(0, 1, [], [])])
    store.schedule(league, [Pairing("b1", "tictactoe", ("learner", "bot"), 0)])
    store.finish(league, "b1", bare)
    store.close()
    result = CliRunner().invoke(app, ["export", "--kind", "atropos", "--out", str(tmp_path / "g.jsonl"), "--db", f"sqlite:///{tmp_path / 'b.db'}"])
    assert result.exit_code == 2 and "no stored turn carries exact token ids" in result.stderr
    pushed = CliRunner().invoke(app, ["export", "--kind", "sft", "--out", str(tmp_path / "s.jsonl"), "--push", "http://127.0.0.1:9"])
    assert pushed.exit_code == 2 and "--push needs --kind atropos" in pushed.stderr
    store = Store(f"sqlite:///{tmp_path / 'b.db'}")
    store.schedule(store.open_league("rollouts"), [Pairing("m1", "tictactoe", ("learner", "bot"), 0)])
    store.finish(store.league_id("rollouts"), "m1", MATCHES[0])
    store.close()
    closed = free_port()  # nothing listens there
    refused = CliRunner().invoke(app, ["export", "--kind", "atropos", "--out", str(tmp_path / "g.jsonl"), "--db", f"sqlite:///{tmp_path / 'b.db'}",
                                       "--push", f"http://user:hunter2@127.0.0.1:{closed}"])
    assert refused.exit_code == 2 and "--push: http://127.0.0.1:" in refused.stderr and "ConnectError" in refused.stderr
    assert "hunter2" not in refused.stderr and refused.stderr.strip().count("\n") == 0

