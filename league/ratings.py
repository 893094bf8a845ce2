"""Ratings as pure functions of the match log (the same log in the same order gives the same numbers).

- TrueSkill family: openskill's Weng-Lin models (Plackett-Luce by default), folded in log order;
  multi-player games are rated by rank. Rating = conservative mu - 3 sigma; CI = mu -/+ 1.96 sigma.
- Elo: sequential, K configurable; a multi-player game is all its pairwise games, each with K/(n-1),
  computed from the ratings before the match.
- Bradley-Terry: maximum likelihood of P(i beats j) = p_i / (p_i + p_j) over every pairwise
  comparison (ties count half a win each), with a weak prior (one virtual win and one virtual loss
  against a fixed reference player of strength 1) so unbeaten or unconnected players stay finite
  and the scale is pinned. Fitted by damped Newton steps on the concave log-likelihood. Pooled across games, each game
  weighs the same in total. 95% CIs by bootstrap over matches (resampled within each game).
  Reported on the Elo scale: 1000 + 400 * log10(p).
- Rank (all systems with CIs): 1 + the number of policies whose lower bound is above this one's
  upper bound (the "rank by upper bound" rule of LMSYS's leaderboard), so overlapping policies tie.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from league.results import GameResult, for_game, pairwise

SYSTEMS = ("trueskill", "elo", "bt")
ELO_BASE = 1000.0
BT_SCALE = 400.0 / math.log(10.0)


@dataclass
class RatingRow:
    policy: str
    rating: float
    lo: float
    hi: float
    rank: int = 0
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class PairStat:
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


# ---- per-policy and per-pair counts -----------------------------------------------------------
def pair_stats(results: Sequence[GameResult], game: str | None = None) -> dict[tuple[str, str], PairStat]:
    """Head-to-head counts of the first policy against the second, both orders present."""
    stats: dict[tuple[str, str], PairStat] = defaultdict(PairStat)
    for result in for_game(results, game):
        for a, b, score in pairwise(result):
            ab, ba = stats[(a, b)], stats[(b, a)]
            if score == 1.0:
                ab.wins += 1
                ba.losses += 1
            elif score == 0.0:
                ab.losses += 1
                ba.wins += 1
            else:
                ab.draws += 1
                ba.draws += 1
    return dict(stats)


def _records(results: Sequence[GameResult]) -> dict[str, list[int]]:
    """policy -> [games, wins, draws, losses]; a multi-player game is a win for rank 1 alone, a
    draw when everyone shares rank 1, else a loss."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for result in results:
        everyone_first = all(r == 1 for r in result.ranks)
        for name, rank in set(zip(result.players, result.ranks)):
            row = counts[name]
            row[0] += 1
            if everyone_first:
                row[2] += 1
            elif rank == 1 and list(result.ranks).count(1) == 1:
                row[1] += 1
            elif rank == 1:
                row[2] += 1
            else:
                row[3] += 1
    return counts


# ---- TrueSkill family (openskill) --------------------------------------------------------------
def _openskill_model(name: str):
    from openskill.models import PlackettLuce, ThurstoneMostellerFull

    models = {"plackett_luce": PlackettLuce, "thurstone_mosteller": ThurstoneMostellerFull}
    if name not in models:
        raise ValueError(f"unknown TrueSkill-family model {name!r} (choose {', '.join(models)})")
    return models[name]()


def trueskill(results: Sequence[GameResult], model: str = "plackett_luce") -> dict[str, tuple[float, float]]:
    """policy -> (mu, sigma) after folding the results in order."""
    skill = _openskill_model(model)
    ratings: dict[str, Any] = {}
    for result in results:
        # A policy in several seats (self-play) is rated once, at its best rank.
        best: dict[str, int] = {}
        for name, rank in zip(result.players, result.ranks):
            best[name] = min(rank, best.get(name, rank))
        if len(best) < 2:
            continue
        names = list(best)
        for name in names:
            ratings.setdefault(name, skill.rating(name=name))
        rated = skill.rate([[ratings[n]] for n in names], ranks=[best[n] for n in names])
        for name, team in zip(names, rated):
            ratings[name] = team[0]
    return {name: (r.mu, r.sigma) for name, r in ratings.items()}


# ---- Elo ---------------------------------------------------------------------------------------
def elo(results: Sequence[GameResult], k: float = 32.0, base: float = ELO_BASE) -> dict[str, float]:
    ratings: dict[str, float] = {}
    for result in results:
        pairs = list(pairwise(result))
        if not pairs:
            continue
        n = len(set(result.players))
        scale = k / max(1, n - 1)
        before = {name: ratings.get(name, base) for name in result.players}
        delta: dict[str, float] = defaultdict(float)
        for a, b, score in pairs:
            expected = 1.0 / (1.0 + 10 ** ((before[b] - before[a]) / 400.0))
            delta[a] += scale * (score - expected)
            delta[b] -= scale * (score - expected)
        for name in before:
            ratings[name] = before[name] + delta[name]
    return ratings


# ---- Bradley-Terry -------------------------------------------------------------------------------
def comparisons(results: Sequence[GameResult], names: list[str]) -> tuple[np.ndarray, ...]:
    """Arrays over every pairwise comparison: index of a, index of b, score of a, weight, and the
    position of its match in `results` (for the bootstrap)."""
    index = {n: i for i, n in enumerate(names)}
    games = sorted({r.game_id for r in results})
    per_game = {g: sum(1 for r in results if r.game_id == g) for g in games}
    total = len(results)
    rows_a, rows_b, scores, weights, match_ids = [], [], [], [], []
    for m, result in enumerate(results):
        # Each game weighs the same in total, whatever its number of matches.
        weight = total / (len(games) * per_game[result.game_id])
        for a, b, score in pairwise(result):
            rows_a.append(index[a])
            rows_b.append(index[b])
            scores.append(score)
            weights.append(weight)
            match_ids.append(m)
    return (
        np.array(rows_a, dtype=np.int64),
        np.array(rows_b, dtype=np.int64),
        np.array(scores, dtype=float),
        np.array(weights, dtype=float),
        np.array(match_ids, dtype=np.int64),
    )


def bt_fit(
    a: np.ndarray, b: np.ndarray, score: np.ndarray, weight: np.ndarray, n: int, prior: float = 1.0, tol: float = 1e-10, max_iter: int = 100
) -> np.ndarray:
    """Log-strengths theta (length n) maximising the prior-regularised Bradley-Terry likelihood

        L(theta) = sum_c w_c [s_c log sig(theta_a - theta_b) + (1 - s_c) log sig(theta_b - theta_a)]
                   + prior * sum_i [log sig(theta_i) + log sig(-theta_i)]

    (the prior is one virtual win and one virtual loss against a reference of strength 1).
    L is strictly concave, so damped Newton steps converge in a few iterations; Hunter's MM
    algorithm (2004) reaches the same optimum but needed thousands of iterations here."""
    theta = np.zeros(n)

    def objective(t: np.ndarray) -> float:
        d = t[a] - t[b]
        pairs = np.sum(weight * (score * -np.logaddexp(0.0, -d) + (1 - score) * -np.logaddexp(0.0, d)))
        return float(pairs + prior * np.sum(-np.logaddexp(0.0, -t) - np.logaddexp(0.0, t)))

    current = objective(theta)
    for _ in range(max_iter):
        d = theta[a] - theta[b]
        p = 1.0 / (1.0 + np.exp(-d))
        residual = weight * (score - p)
        grad = np.bincount(a, weights=residual, minlength=n) - np.bincount(b, weights=residual, minlength=n)
        q = 1.0 / (1.0 + np.exp(-theta))
        grad += prior * (1.0 - 2.0 * q)
        curvature = weight * p * (1.0 - p)
        hess = np.zeros((n, n))
        np.add.at(hess, (a, a), -curvature)
        np.add.at(hess, (b, b), -curvature)
        np.add.at(hess, (a, b), curvature)
        np.add.at(hess, (b, a), curvature)
        hess[np.diag_indices(n)] -= 2.0 * prior * q * (1.0 - q)
        step = np.linalg.solve(hess, -grad)
        scale = 1.0
        while True:  # backtracking keeps every step an ascent step
            candidate = theta + scale * step
            value = objective(candidate)
            if value >= current - 1e-12 or scale < 1e-6:
                break
            scale *= 0.5
        theta, current = candidate, value
        if np.max(np.abs(scale * step)) < tol:
            break
    return theta


def bradley_terry(
    results: Sequence[GameResult], bootstrap: int = 200, seed: int = 0, prior: float = 1.0
) -> dict[str, tuple[float, float, float]]:
    """policy -> (rating, lo95, hi95) on the Elo scale."""
    names = sorted({n for r in results for n in r.players})
    if not names:
        return {}
    a, b, score, weight, match_of = comparisons(results, names)
    n = len(names)
    point = BT_SCALE * bt_fit(a, b, score, weight, n, prior) + ELO_BASE
    if bootstrap <= 0 or len(results) < 2:
        return {name: (float(point[i]), float(point[i]), float(point[i])) for i, name in enumerate(names)}
    rng = np.random.default_rng(seed)
    strata = defaultdict(list)
    for m, result in enumerate(results):
        strata[result.game_id].append(m)
    samples = np.empty((bootstrap, n))
    for s in range(bootstrap):
        counts = np.zeros(len(results))
        for members in strata.values():
            picks = rng.integers(0, len(members), size=len(members))
            np.add.at(counts, np.asarray(members)[picks], 1.0)
        # Resampling a match k times multiplies the weight of its comparisons by k.
        samples[s] = BT_SCALE * bt_fit(a, b, score, weight * counts[match_of], n, prior, tol=1e-8) + ELO_BASE
    lo, hi = np.percentile(samples, [2.5, 97.5], axis=0)
    return {name: (float(point[i]), float(lo[i]), float(hi[i])) for i, name in enumerate(names)}


# ---- the leaderboard -----------------------------------------------------------------------------
def rank_by_upper_bound(rows: list[RatingRow]) -> None:
    """rank = 1 + number of policies whose lower bound is above this one's upper bound."""
    for row in rows:
        row.rank = 1 + sum(1 for other in rows if other.lo > row.hi)


def leaderboard(
    results: Sequence[GameResult],
    by: str = "trueskill",
    game: str | None = None,
    *,
    bootstrap: int = 200,
    seed: int = 0,
    elo_k: float = 32.0,
    model: str = "plackett_luce",
) -> list[RatingRow]:
    """Rows sorted best first. `game=None` rates across all games (BT pools them equally)."""
    if by not in SYSTEMS:
        raise ValueError(f"unknown rating system {by!r} (choose {', '.join(SYSTEMS)})")
    chosen = for_game(results, game)
    counts = _records(chosen)
    rows: list[RatingRow] = []
    if by == "trueskill":
        for name, (mu, sigma) in trueskill(chosen, model).items():
            rows.append(RatingRow(name, mu - 3 * sigma, mu - 1.96 * sigma, mu + 1.96 * sigma, extra={"mu": mu, "sigma": sigma}))
    elif by == "elo":
        for name, value in elo(chosen, elo_k).items():
            rows.append(RatingRow(name, value, value, value))
    else:
        for name, (value, lo, hi) in bradley_terry(chosen, bootstrap, seed).items():
            rows.append(RatingRow(name, value, lo, hi))
    for row in rows:
        row.games, row.wins, row.draws, row.losses = counts[row.policy]
    rows.sort(key=lambda r: (-r.rating, r.policy))
    if by == "elo":  # no interval: plain order, ties share a rank
        for row in rows:
            row.rank = 1 + sum(1 for other in rows if other.rating > row.rating)
    else:
        rank_by_upper_bound(rows)
    return rows
