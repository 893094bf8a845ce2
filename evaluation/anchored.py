"""A Bradley-Terry rating for one new policy against references whose ratings are held fixed.

A league's ratings are relative to whoever plays in it; a frozen suite needs a scale that does not
move. The references' ratings (the anchors) were fitted once, at the suite's release, by the pooled
fit of league/ratings.py; a new policy's log-strength theta then maximises the same objective with
every anchor held fixed:

    L(theta) = sum_c w_c [s_c log sig(theta - a_c) + (1 - s_c) log sig(a_c - theta)]
               + prior [log sig(theta) + log sig(-theta)]

over its pairwise comparisons c (score s_c against the reference with log-strength a_c; weight w_c
pools the games equally and splits an n-player match over its n-1 comparisons, exactly as the
league's fit does). The 95% interval is a seeded percentile bootstrap over the candidate's matches,
resampled within each game. Adding other policies changes nothing here: anchors are constants.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from league.ratings import BT_PRIOR, BT_SCALE, ELO_BASE
from league.results import GameResult, pairwise, standings


@dataclass(frozen=True)
class AnchoredRating:
    rating: float  # Elo scale, the anchors' scale
    lo: float
    hi: float
    comparisons: int


def _comparisons(results: Sequence[GameResult], candidate: str, anchors: Mapping[str, float]) -> tuple[np.ndarray, ...]:
    """(anchor log-strength, score, weight, match index, game index) per comparison of the candidate."""
    mine = [r for r in results if candidate in r.players and len(standings(r)) >= 2]
    per_game: dict[str, int] = defaultdict(int)
    for result in mine:
        per_game[result.game_id] += 1
    games = sorted(per_game)
    rows: list[tuple[float, float, float, int, int]] = []
    for m, result in enumerate(mine):
        pooling = len(mine) / (len(games) * per_game[result.game_id])
        distinct = len(standings(result))
        for a, b, score in pairwise(result):
            if candidate not in (a, b):
                continue  # references among themselves: their ratings are fixed
            other, mine_score = (b, score) if a == candidate else (a, 1.0 - score)
            if other not in anchors:
                raise ValueError(f"match {result.match_id}: {other!r} has no anchor rating")
            theta = (anchors[other] - ELO_BASE) / BT_SCALE
            rows.append((theta, mine_score, pooling / (distinct - 1), m, games.index(result.game_id)))
    if not rows:
        return tuple(np.zeros(0) for _ in range(5))
    cols = np.asarray(rows, dtype=float).T
    return cols[0], cols[1], cols[2], cols[3].astype(np.int64), cols[4].astype(np.int64)


def _solve(anchor: np.ndarray, score: np.ndarray, weight: np.ndarray, prior: float = BT_PRIOR) -> np.ndarray:
    """theta maximising L for each row of `weight` (B, comparisons) at once; L is strictly concave
    in one variable, so plain Newton steps converge in a handful of iterations."""
    theta = np.zeros(weight.shape[0])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - anchor[None, :])))
        q = 1.0 / (1.0 + np.exp(-theta))
        grad = np.sum(weight * (score[None, :] - p), axis=1) + prior * (1.0 - 2.0 * q)
        curvature = np.sum(weight * p * (1.0 - p), axis=1) + 2.0 * prior * q * (1.0 - q)
        step = grad / curvature
        theta = theta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta


def anchored_rating(
    results: Sequence[GameResult], candidate: str, anchors: Mapping[str, float], *, bootstrap: int = 400, seed: int = 0
) -> AnchoredRating:
    """The candidate's rating on the anchors' scale with a 95% bootstrap interval (seeded)."""
    anchor, score, weight, match, game = _comparisons(results, candidate, anchors)
    point = float(_solve(anchor, score, weight[None, :])[0]) if len(anchor) else 0.0
    rating = BT_SCALE * point + ELO_BASE
    if len(anchor) == 0 or bootstrap <= 0:
        return AnchoredRating(rating, rating, rating, len(anchor))
    rng = np.random.default_rng(seed)
    matches = int(match.max()) + 1
    counts = np.zeros((bootstrap, matches))
    match_game = np.zeros(matches, dtype=np.int64)
    match_game[match] = game
    for g in np.unique(game):
        members = np.flatnonzero(match_game == g)
        draws = members[rng.integers(0, len(members), size=(bootstrap, len(members)))]
        for b in range(bootstrap):
            counts[b] += np.bincount(draws[b], minlength=matches)
    thetas = _solve(anchor, score, counts[:, match] * weight[None, :])
    low, high = np.percentile(BT_SCALE * thetas + ELO_BASE, [2.5, 97.5])
    return AnchoredRating(rating, min(float(low), rating), max(float(high), rating), len(anchor))


def fit_anchors(results: Sequence[GameResult]) -> dict[str, float]:
    """The references' ratings from their own tournament: the league's pooled Bradley-Terry fit."""
    from league.ratings import leaderboard

    return {row.policy: round(row.rating, 2) for row in leaderboard(results, "bt", bootstrap=0)}
