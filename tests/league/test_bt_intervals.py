"""Bradley-Terry's sandwich (robust) interval and its two ways of pooling games: the covariance is
the documented H^-1 B H^-1, rebuilt here from numerical derivatives of the likelihood written from
scratch; it agrees with the bootstrap where both are right; it is a pure function of the log."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from league.ratings import BT_SCALE, ELO_BASE, bt_sandwich, leaderboard
from league.results import GameResult
from tests.league.test_ratings import simulate


def _match_loglik(result: GameResult, at: dict[str, int], game_weight: float):
    """One match's weighted log-likelihood as a function of theta, written from the docs."""
    best: dict[str, int] = {}
    for name, rank in zip(result.players, result.ranks):
        best[name] = min(rank, best.get(name, rank))
    pairs = list(combinations(best.items(), 2))
    w = game_weight / (len(best) - 1)

    def loglik(theta):
        total = 0.0
        for (x, rx), (y, ry) in pairs:
            s = 1.0 if rx < ry else 0.5 if rx == ry else 0.0
            d = theta[at[x]] - theta[at[y]]
            total += w * (-s * np.logaddexp(0.0, -d) - (1 - s) * np.logaddexp(0.0, d))
        return total

    return loglik


def _numeric_sandwich(results, names, theta, pooling, prior=1.0, h=1e-3):
    at = {n: i for i, n in enumerate(names)}
    counts = {}
    for r in results:
        counts[r.game_id] = counts.get(r.game_id, 0) + 1
    weight = {g: 1.0 if pooling == "matches" else len(results) / (len(counts) * c) for g, c in counts.items()}
    parts = [_match_loglik(r, at, weight[r.game_id]) for r in results]
    n, eye = len(names), np.eye(len(names))

    def gradient(f, t, h=1e-6):
        return np.array([(f(t + h * eye[k]) - f(t - h * eye[k])) / (2 * h) for k in range(n)])

    def objective(t):
        return sum(p(t) for p in parts) + prior * np.sum(-np.logaddexp(0.0, -t) - np.logaddexp(0.0, t))

    def second(k, l):  # central second difference, symmetric by construction
        a, b = h * eye[k], h * eye[l]
        return (objective(theta + a + b) - objective(theta + a - b) - objective(theta - a + b) + objective(theta - a - b)) / (4 * h * h)

    hessian = -np.array([[second(k, l) for l in range(n)] for k in range(n)])
    scores = np.array([gradient(p, theta) for p in parts])
    bread = np.linalg.inv(hessian)
    return bread @ scores.T @ scores @ bread


@pytest.mark.parametrize("pooling", ["games", "matches"])
def test_sandwich_is_the_documented_formula(pooling):
    # three-player matches (one cluster of three comparisons each) in two games of unequal size
    results = simulate({"a": 3.0, "b": 1.5, "c": 1.0, "d": 0.7}, 40, seed=5, players=3)
    results += simulate({"a": 1.0, "b": 2.0, "c": 1.0, "d": 2.0}, 12, seed=6, game="other", players=3)
    rows = {r.policy: r for r in leaderboard(results, "bt", bootstrap=0, pooling=pooling)}
    names = sorted(rows)
    theta = np.array([rows[n].extra["log_strength"] for n in names])
    ours = bt_sandwich(results, names, theta, pooling=pooling)
    assert np.allclose(ours, _numeric_sandwich(results, names, theta, pooling), rtol=1e-4, atol=1e-8)


def test_sandwich_interval_is_centred_and_agrees_with_the_bootstrap():
    # a well-specified model with many matches: both intervals estimate the same spread
    results = simulate({"a": 3.0, "b": 2.0, "c": 1.5, "d": 1.0, "e": 0.5}, 3000, seed=8)
    sandwich = {r.policy: r for r in leaderboard(results, "bt", ci="sandwich")}
    bootstrap = {r.policy: r for r in leaderboard(results, "bt", ci="bootstrap", bootstrap=400, seed=1)}
    for name, row in sandwich.items():
        assert row.rating == pytest.approx(bootstrap[name].rating)
        assert row.hi - row.rating == pytest.approx(row.rating - row.lo)
        width, reference = row.hi - row.lo, bootstrap[name].hi - bootstrap[name].lo
        assert abs(width / reference - 1) < 0.15, (name, width, reference)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.permutations(["a", "b", "c", "d"]), st.lists(st.integers(1, 3), min_size=3, max_size=3)), min_size=2, max_size=25),
       st.sampled_from(["games", "matches"]), st.randoms(use_true_random=False))
def test_sandwich_is_a_pure_function_of_the_log(matches, pooling, rnd):
    log = [GameResult(f"m{k}", "g" if k % 3 else "h", tuple(order[:3]), tuple(ranks)) for k, (order, ranks) in enumerate(matches)]
    rows = leaderboard(log, "bt", ci="sandwich", pooling=pooling)
    names = sorted(r.policy for r in rows)
    theta = np.array([{r.policy: r for r in rows}[n].extra["log_strength"] for n in names])
    cov = bt_sandwich(log, names, theta, pooling=pooling)
    assert np.allclose(cov, cov.T) and np.linalg.eigvalsh(cov).min() > -1e-9  # a covariance
    for row in rows:
        assert row.lo <= row.rating <= row.hi and np.isfinite([row.lo, row.hi]).all()
    shuffled = list(log)
    rnd.shuffle(shuffled)
    again = {r.policy: (r.rating, r.lo, r.hi) for r in leaderboard(shuffled, "bt", ci="sandwich", pooling=pooling)}
    for row in rows:  # matches are exchangeable in BT: the order of the log changes nothing
        assert np.allclose(again[row.policy], (row.rating, row.lo, row.hi), atol=1e-6)


def test_pooling_by_matches_lets_the_bigger_game_dominate():
    big = simulate({"a": 3.0, "b": 1.0}, 300, seed=2, game="big", draw_rate=0.0)
    small = [GameResult(f"s{i}", "small", ("a", "b"), (2, 1)) for i in range(10)]
    by_games = {r.policy: r.rating for r in leaderboard(big + small, "bt", bootstrap=0, pooling="games")}
    by_matches = {r.policy: r.rating for r in leaderboard(big + small, "bt", bootstrap=0, pooling="matches")}
    assert abs(by_games["a"] - by_games["b"]) < 100 < by_matches["a"] - by_matches["b"]
    one_game = {r.policy: r.rating for r in leaderboard(big, "bt", bootstrap=0, pooling="matches")}
    assert one_game == {r.policy: r.rating for r in leaderboard(big, "bt", bootstrap=0, pooling="games")}


def test_unknown_options_are_named():
    log = simulate({"a": 1.0, "b": 1.0}, 5, seed=1)
    with pytest.raises(ValueError, match="confidence interval method 'laplace'"):
        leaderboard(log, "bt", ci="laplace")
    with pytest.raises(ValueError, match="pooling 'seats'"):
        leaderboard(log, "bt", pooling="seats")
