"""The anchored Bradley-Terry fit: exact on a case solvable by hand, anchors held fixed, seeded CIs."""

import math

import numpy as np
import pytest

from evaluation.anchored import _solve, anchored_rating, fit_anchors
from league.ratings import BT_SCALE, ELO_BASE
from league.results import GameResult


def _results(candidate: str, opponent: str, wins: int, losses: int, draws: int = 0, game: str = "g") -> list[GameResult]:
    out = []
    for k, ranks in enumerate([(1, 2)] * wins + [(2, 1)] * losses + [(1, 1)] * draws):
        out.append(GameResult(f"{game}{k}", game, (candidate, opponent), ranks))
    return out


def test_without_prior_the_fit_is_the_anchor_plus_the_log_odds():
    # 3 wins, 1 loss against an anchor of log-strength 0.5: sig(theta - 0.5) = 3/4
    theta = _solve(np.array([0.5] * 4), np.array([1.0, 1.0, 1.0, 0.0]), np.ones((1, 4)), prior=0.0)[0]
    assert theta == pytest.approx(0.5 + math.log(3.0), abs=1e-9)


def test_a_policy_that_beats_the_strongest_anchor_rates_above_it():
    anchors = {"weak": 900.0, "strong": 1300.0}
    results = _results("new", "weak", 8, 0) + _results("new", "strong", 6, 2, game="h")
    fit = anchored_rating(results, "new", anchors)
    assert fit.rating > 1300.0 and fit.lo <= fit.rating <= fit.hi
    assert fit.comparisons == 16


def test_the_interval_is_seeded_and_the_anchors_are_untouched():
    anchors = {"a": 1000.0, "b": 1200.0}
    frozen = dict(anchors)
    results = _results("new", "a", 5, 3, 2) + _results("new", "b", 2, 6, 1, game="h")
    assert anchored_rating(results, "new", anchors, seed=3) == anchored_rating(results, "new", anchors, seed=3)
    assert anchors == frozen


def test_matches_between_other_policies_do_not_change_the_rating():
    anchors = {"a": 1000.0, "b": 1150.0}
    mine = _results("new", "a", 4, 4)
    others = _results("a", "b", 10, 0, game="h") + _results("x", "b", 3, 0, game="h")
    assert anchored_rating(mine + others, "new", anchors) == anchored_rating(mine, "new", anchors)


def test_a_missing_anchor_is_named():
    with pytest.raises(ValueError, match="'ghost' has no anchor"):
        anchored_rating(_results("new", "ghost", 1, 0), "new", {"a": 1000.0})


def test_fit_anchors_is_the_pooled_league_fit():
    results = _results("a", "b", 6, 2)
    anchors = fit_anchors(results)
    assert anchors["a"] > ELO_BASE > anchors["b"]
    assert anchors["a"] - ELO_BASE == pytest.approx(ELO_BASE - anchors["b"], abs=0.01)
    assert BT_SCALE > 0
