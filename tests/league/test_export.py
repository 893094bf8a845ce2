"""Exports: raw records round-trip; SFT keeps only winners' valid turns; DPO pairs winners'
replies against losers' and invalid ones at identical states; the shapes TRL reads."""

import json

import pytest

from arena.match import MatchRecord, TurnRecord
from league.export import dpo_rows, export_dpo, export_records, export_sft, sft_rows
from league.scheduling import Pairing
from league.store import Store


def _turn(index, player, obs, raw, valid=True, meta=None):
    return TurnRecord(index=index, player=player, policy=f"p{player}", turn=index, attempt=0, observation=obs,
                      legal_moves=None, raw=raw, action=raw, valid=valid, meta=meta or {})


def _match(key, ranks, turns):
    return MatchRecord(key, "tictactoe", 2, 0, ["p0", "p1"], ["bot", "random"], turns=turns,
                       outcome={"ranks": ranks, "scores": [0, 0], "reason": "test"}, status="finished")


MATCHES = [
    # p0 wins: its valid replies are good; p1's reply and p0's invalid try are bad.
    _match("m1", [1, 2], [_turn(0, 0, "S1", "I play 5", meta={"prompt_tokens_note": 1}), _turn(1, 1, "S2", "corner 1"),
                          _turn(2, 0, "S3", "???", valid=False), _turn(3, 0, "S3", "I play 3")]),
    # p1 wins from S1 with another reply: p0's "I play 5" is now also a loser's reply at S1 -> dropped.
    _match("m2", [2, 1], [_turn(0, 0, "S1", "I play 5"), _turn(1, 1, "S2", "center please"), _turn(2, 0, "S1", "I play 9")]),
    # A draw teaches nothing for SFT; its invalid reply is still a rejected candidate at S2.
    _match("m3", [1, 1], [_turn(0, 0, "S2", "nonsense", valid=False)]),
    # The exact chat a policy sent, when recorded, is the prompt.
    _match("m4", [1, 2], [_turn(0, 0, "S4", "take 2", meta={"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "u"}]})]),
]


def test_sft_is_winners_valid_turns_as_chat():
    rows = list(sft_rows(MATCHES))
    replies = [r["messages"][-1]["content"] for r in rows]
    assert replies == ["I play 5", "I play 3", "center please", "take 2"]
    for row in rows:
        roles = [m["role"] for m in row["messages"]]
        assert roles[-1] == "assistant" and roles[-2] == "user" and set(roles) <= {"system", "user", "assistant"}
    assert rows[0]["messages"][0]["role"] == "system" and "Tic-Tac-Toe" in rows[0]["messages"][0]["content"]
    assert rows[0]["messages"][1] == {"role": "user", "content": "S1"}
    assert rows[-1]["messages"][:2] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "u"}]


def test_dpo_pairs_at_identical_states():
    pairs = {(p["prompt"][-1]["content"], p["chosen"][0]["content"], p["rejected"][0]["content"]) for p in dpo_rows(MATCHES)}
    assert pairs == {
        ("S2", "center please", "corner 1"),
        ("S2", "center please", "nonsense"),
        ("S3", "I play 3", "???"),
        # S1: "I play 5" was both a winner's and a loser's reply -> neither side; "I play 9" has no chosen partner.
    }
    for pair in dpo_rows(MATCHES):
        assert set(pair) >= {"prompt", "chosen", "rejected"}
        assert pair["prompt"][-1]["role"] == "user" and pair["chosen"][0]["role"] == pair["rejected"][0]["role"] == "assistant"


def test_files_from_a_store(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    league = store.open_league("ex")
    store.schedule(league, [Pairing(m.match_id, "tictactoe", ("p0", "p1"), 0) for m in MATCHES])
    for m in MATCHES:
        store.finish(league, m.match_id, m)
    assert export_records(store, tmp_path / "r.jsonl") == 4
    back = [MatchRecord.from_dict(json.loads(line)) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [[t.raw for t in b.turns] for b in back] == [[t.raw for t in m.turns] for m in MATCHES]
    assert export_sft(store, tmp_path / "s.jsonl", league_id=league) == 4
    assert export_dpo(store, tmp_path / "d.jsonl", game="tictactoe") == 3
    assert export_dpo(store, tmp_path / "none.jsonl", game="nim") == 0
    assert not list(tmp_path.glob("*.partial"))
    store.close()


@pytest.mark.slow
def test_trl_recognises_the_formats():
    from trl.data_utils import is_conversational

    assert all(is_conversational(row) for row in sft_rows(MATCHES))
    assert all(is_conversational(row) for row in dpo_rows(MATCHES))
