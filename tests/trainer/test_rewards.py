"""Reward terms from MatchRecords, combining, and the custom-function hook."""

import pytest

from arena.match import MatchRecord, TurnRecord
from trainer.config import RewardSettings, RewardTerm
from trainer.rewards import Episode, RewardError, RewardModel, outcome_reward, pareto_fronts


def _turn(i, player, valid=True, tokens=4, raw="[4]", parse="bracket"):
    return TurnRecord(index=i, player=player, policy="p", turn=i, attempt=0, observation="", legal_moves=None,
                      raw=raw, action=raw, valid=valid, completion_tokens=tokens, meta={"parse": parse})


def _record(ranks, turns=()):
    return MatchRecord(match_id="m", game_id="g", num_players=len(ranks), seed=0, policies=["a"] * len(ranks),
                       specs=["a"] * len(ranks), turns=list(turns), outcome={"scores": [0.0] * len(ranks), "ranks": list(ranks)}, status="finished")


def test_outcome_wdl_and_rank():
    assert [outcome_reward(_record([1, 2]), s) for s in (0, 1)] == [1, -1]
    assert outcome_reward(_record([1, 1]), 0) == 0
    assert outcome_reward(_record([1, 1, 3]), 0) == 0  # shared first place
    assert [outcome_reward(_record([1, 2, 3]), s, "rank") for s in (0, 1, 2)] == [1, 0, -1]
    aborted = _record([1, 2]); aborted.outcome = None
    assert outcome_reward(aborted, 0) == 0


def test_weighted_sum_of_terms():
    turns = [_turn(0, 0, valid=False, raw="hello", parse="unmatched", tokens=40), _turn(1, 0, tokens=8), _turn(2, 1)]
    rec = _record([2, 1], turns)
    model = RewardModel(RewardSettings(terms=[
        RewardTerm(kind="outcome"), RewardTerm(kind="invalid", weight=0.5), RewardTerm(kind="format", weight=2),
        RewardTerm(kind="length", weight=1, target_tokens=16),
    ]))
    ep = Episode(rec, 0, "g")
    model.score([ep])
    # outcome -1; invalid -1/2; format -1/2; length: mean 24 tokens, (24-16)/16 = 0.5 -> -0.5
    assert ep.components == {"outcome": -1, "invalid": -0.5, "format": -0.5, "length": -0.5}
    assert ep.reward == pytest.approx(-1 - 0.25 - 1 - 0.5)


def test_custom_function_and_its_failures():
    rec = _record([1, 2], [_turn(0, 0, raw="[12]"), _turn(1, 1, raw="x")])
    model = RewardModel(RewardSettings(terms=[RewardTerm(kind="custom", function="tests.trainer.rewards_helper:short_replies")]))
    ep = Episode(rec, 0, "g")
    model.score([ep])
    assert ep.reward == -4
    bad = RewardModel(RewardSettings(terms=[RewardTerm(kind="custom", function="math:log")]))
    with pytest.raises(RewardError, match="custom:math:log"):
        bad.score([ep])  # log(record, seat) raises TypeError: reported in one line


def test_pareto_fronts_and_rank_reward():
    assert pareto_fronts([[1, 1], [0, 0], [1, 0], [0, 1]]) == [0, 2, 1, 1]
    recs = [_record([1, 2], [_turn(0, 0, valid=v)]) for v in (True, False)]
    eps = [Episode(recs[0], 0, "g"), Episode(recs[1], 0, "g"), Episode(recs[0], 1, "g")]
    RewardModel(RewardSettings(combine="pareto", terms=[RewardTerm(kind="outcome"), RewardTerm(kind="invalid")])).score(eps)
    # points (1,0), (1,-1), (-1,0): the first dominates both others, which do not dominate each other
    assert [e.reward for e in eps] == [1.0, 0.0, 0.0]
