"""Ratings: pure functions of the log, checked against independent fits and known strengths."""

import math
import random

import numpy as np
import pytest
from scipy.optimize import minimize

from league.ratings import BT_SCALE, ELO_BASE, bradley_terry, comparisons, elo, leaderboard, pair_stats, trueskill
from league.results import GameResult


def simulate(strengths: dict[str, float], matches: int, seed: int, game: str = "g", draw_rate: float = 0.1) -> list[GameResult]:
    rng = random.Random(seed)
    names = sorted(strengths)
    out = []
    for m in range(matches):
        a, b = rng.sample(names, 2)
        p_a = strengths[a] / (strengths[a] + strengths[b])
        if rng.random() < draw_rate:
            ranks = (1, 1)
        else:
            ranks = (1, 2) if rng.random() < p_a else (2, 1)
        out.append(GameResult(f"{game}-{m}", game, (a, b), ranks))
    return out


def scipy_bt(results, prior=1.0):
    """The same prior-regularised likelihood, maximised by a general-purpose optimiser."""
    names = sorted({n for r in results for n in r.players})
    a, b, score, weight, _ = comparisons(results, names)

    def negative_log_likelihood(theta):
        pa, pb = theta[a], theta[b]
        ll = np.sum(weight * (score * (pa - np.logaddexp(pa, pb)) + (1 - score) * (pb - np.logaddexp(pa, pb))))
        ll += prior * np.sum(theta - np.logaddexp(theta, 0.0)) + prior * np.sum(-np.logaddexp(theta, 0.0))
        return -ll

    fit = minimize(negative_log_likelihood, np.zeros(len(names)), method="BFGS", options={"gtol": 1e-10})
    return {n: BT_SCALE * fit.x[i] + ELO_BASE for i, n in enumerate(names)}


def test_bradley_terry_matches_an_independent_scipy_fit():
    results = simulate({"a": 4.0, "b": 2.0, "c": 1.0, "d": 0.5}, 400, seed=1)
    ours = bradley_terry(results, bootstrap=0)
    theirs = scipy_bt(results)
    for name in theirs:
        # 1e-3 on the log-strength scale
        assert abs(ours[name][0] - theirs[name]) / BT_SCALE < 1e-3, (name, ours[name][0], theirs[name])


def test_pooling_weights_each_game_equally():
    big = simulate({"a": 3.0, "b": 1.0}, 300, seed=2, game="big")
    small = [GameResult(f"s{i}", "small", ("a", "b"), (2, 1)) for i in range(10)]
    pooled = bradley_terry(big + small, bootstrap=0)
    # with equal game weights the 10 losses of "a" in the small game count as much as 300 games
    unweighted_a_share = sum(1 for r in big + small if r.ranks[r.players.index("a")] == 1) / 310
    assert unweighted_a_share > 0.6
    assert abs(pooled["a"][0] - pooled["b"][0]) < 100


def test_recompute_is_identical_and_ci_contains_point():
    results = simulate({"a": 3.0, "b": 1.5, "c": 1.0}, 200, seed=3)
    first = leaderboard(results, by="bt", bootstrap=50, seed=7)
    second = leaderboard(results, by="bt", bootstrap=50, seed=7)
    assert first == second
    for row in first:
        assert row.lo <= row.rating <= row.hi


def test_ranks_follow_true_strengths_and_respect_intervals():
    strengths = {f"p{i}": 2.0 ** (i / 2) for i in range(6)}
    results = simulate(strengths, 3000, seed=4)
    for system in ("bt", "trueskill"):
        rows = leaderboard(results, by=system, bootstrap=100)
        assert [r.policy for r in rows][:2] == ["p5", "p4"], system
        assert rows[-1].policy == "p0", system
    elo_order = [r.policy for r in leaderboard(results, by="elo")]  # Elo is noisy: order-dependent
    assert set(elo_order[:2]) == {"p5", "p4"} and elo_order[-1] == "p0"
    rows = leaderboard(results, by="bt", bootstrap=100)
    for row in rows:
        assert row.rank == 1 + sum(1 for other in rows if other.lo > row.hi)
    assert rows[0].rank == 1 and rows[-1].rank > 1


def test_multiplayer_games_rate_by_rank():
    results = [GameResult(f"m{i}", "liars_dice", ("a", "b", "c"), (1, 2, 3)) for i in range(30)]
    for system in ("trueskill", "elo", "bt"):
        order = [r.policy for r in leaderboard(results, by=system, bootstrap=20)]
        assert order == ["a", "b", "c"], system


def test_elo_is_zero_sum_and_sequential():
    results = simulate({"a": 2.0, "b": 1.0, "c": 1.0}, 100, seed=5)
    ratings = elo(results, k=16)
    assert math.isclose(sum(ratings.values()), 3 * ELO_BASE, abs_tol=1e-6)
    assert elo(results[:50] + results[50:], k=16) == ratings


def test_trueskill_self_play_is_ignored_and_unknown_model_rejected():
    assert trueskill([GameResult("x", "g", ("a", "a"), (1, 2))]) == {}
    with pytest.raises(ValueError, match="unknown TrueSkill-family model"):
        trueskill([], model="glicko")
    with pytest.raises(ValueError, match="unknown rating system"):
        leaderboard([], by="glicko")


def test_pair_stats_and_records():
    results = [
        GameResult("1", "g", ("a", "b"), (1, 2)),
        GameResult("2", "g", ("b", "a"), (1, 1)),
        GameResult("3", "h", ("a", "b"), (2, 1)),
    ]
    stats = pair_stats(results)
    assert (stats[("a", "b")].wins, stats[("a", "b")].draws, stats[("a", "b")].losses) == (1, 1, 1)
    assert stats[("b", "a")].win_rate == 0.5
    assert pair_stats(results, game="h")[("a", "b")].losses == 1
    row = {r.policy: r for r in leaderboard(results, by="elo")}["a"]
    assert (row.games, row.wins, row.draws, row.losses) == (3, 1, 1, 1)
