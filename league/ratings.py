"""Ratings as pure functions of the match log: the same log in the same order gives the same numbers,
whether recomputed by `leaderboard` or folded match by match by `OnlineRatings` (both run the
same `_Scope` code on the same values, so they agree bit for bit). The formulas and references
are in docs/ratings.md.

- TrueSkill family: openskill's Weng-Lin models (Plackett-Luce by default, Thurstone-Mosteller
  full pairing as an option), folded in log order; multi-player games are rated by rank.
  rating = mu - 3 sigma (conservative), lo/hi = mu -/+ 1.96 sigma.
- Elo: sequential with factor K; a game of n distinct policies is all its n(n-1)/2 pairwise games,
  each with K/(n-1) and expectations from the ratings before the match. No interval (lo = hi).
- Bradley-Terry: maximum likelihood of P(i beats j) = p_i / (p_i + p_j) over the pairwise
  comparisons (ties = half a win each; a comparison from an n-policy game weighs 1/(n-1)), plus
  a weak prior (one virtual win and one virtual loss against a reference of strength 1) so
  unbeaten or unconnected policies stay finite. Pooled across games, each game weighs the same
  (`pooling="games"`, Kaggle Game Arena's unified leaderboard) or every match counts once
  (`pooling="matches"`). Shown on the Elo scale, 1000 + 400 log10(p). 95% CIs from a seeded
  bootstrap over matches (`ci="bootstrap"`) or the sandwich (robust) covariance of the fit
  (`ci="sandwich"`, LMArena's default), clustered by match.
- rank (systems with intervals): 1 + the number of policies whose lower bound is above this one's
  upper bound (the "rank by upper bound" rule of LMSYS's leaderboard), so overlapping policies tie.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import sparse

from league.results import GameResult, for_game, is_rated, outcome_of, pairwise, standings

SYSTEMS = ("trueskill", "elo", "bt")
MODELS = ("plackett_luce", "thurstone_mosteller")
CI_METHODS = ("bootstrap", "sandwich")  # Bradley-Terry intervals
POOLINGS = ("games", "matches")  # how Bradley-Terry pools several games
ELO_BASE = 1000.0
BT_SCALE = 400.0 / math.log(10.0)  # log-strength -> Elo points
BT_PRIOR = 1.0  # virtual wins and losses against the reference player
NORMAL_95 = 1.959963984540054  # two-sided 95% quantile of the standard normal
_BOOTSTRAP_CELLS = 4_000_000  # bootstrap chunk size (resamples x comparisons), bounds memory


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
    """Head-to-head record of one policy against another (draws count half in the win rate)."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.0


def pair_stats(results: Sequence[GameResult], game: str | None = None) -> dict[tuple[str, str], PairStat]:
    """(a, b) -> a's record against b, both orders present. A multi-player game counts once for each
    pair of distinct policies in it, decided by their ranks."""
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


def _openskill_model(name: str) -> Any:
    from openskill.models import PlackettLuce, ThurstoneMostellerFull

    models = {"plackett_luce": PlackettLuce, "thurstone_mosteller": ThurstoneMostellerFull}
    if name not in models:
        raise ValueError(f"unknown TrueSkill-family model {name!r} (choose {', '.join(models)})")
    return models[name]()


def _check_system(by: str) -> None:
    if by not in SYSTEMS:
        raise ValueError(f"unknown rating system {by!r} (choose {', '.join(SYSTEMS)})")


def _check_bt_options(ci: str, pooling: str) -> None:
    if ci not in CI_METHODS:
        raise ValueError(f"unknown confidence interval method {ci!r} (choose {', '.join(CI_METHODS)})")
    if pooling not in POOLINGS:
        raise ValueError(f"unknown pooling {pooling!r} (choose {', '.join(POOLINGS)})")


def _pooling_weights(matches_per_game: dict[str, int], pooling: str) -> dict[str, float]:
    """Weight of one match of each game. "games": N / (G n_g), so every game weighs the same in
    total whatever its match count (Kaggle Game Arena's unified leaderboard divides each game's
    outcome matrix by its match count; the factor N/G keeps the data's total weight at N, so the
    prior weighs the same as in a one-game fit). "matches": 1, every match counts once."""
    total, games = sum(matches_per_game.values()), len(matches_per_game)
    if pooling == "matches":
        return {g: 1.0 for g in sorted(matches_per_game)}
    return {g: total / (games * m) for g, m in sorted(matches_per_game.items())}


# ---- Bradley-Terry solver --------------------------------------------------------------------------
def bt_solve(n_games: np.ndarray, wins: np.ndarray, prior: float = BT_PRIOR, tol: float = 1e-10, max_iter: int = 200) -> np.ndarray:
    """Log-strengths theta maximising the prior-regularised Bradley-Terry log-likelihood, for a
    batch of B problems at once (the bootstrap solves all its resamples together).

    n_games[b, i, j]: comparison weight between i and j (symmetric, zero diagonal);
    wins[b, i, j]: i's score against j (wins + half the ties), so wins + wins^T = n_games.

        L(theta) = sum_{i != j} wins_ij log sig(theta_i - theta_j)
                   + prior * sum_i [log sig(theta_i) + log sig(-theta_i)]

    L is strictly concave (the prior makes it so even for unbeaten or unconnected players), so
    Newton steps with backtracking converge in a handful of iterations. Returns theta (B, n)."""
    batch, n, _ = n_games.shape
    theta = np.zeros((batch, n))
    if n == 0:
        return theta

    def objective(t: np.ndarray) -> np.ndarray:
        d = t[:, :, None] - t[:, None, :]
        pairs = -np.sum(wins * np.logaddexp(0.0, -d), axis=(1, 2))
        return pairs - prior * np.sum(np.logaddexp(0.0, -t) + np.logaddexp(0.0, t), axis=1)

    current = objective(theta)
    diag = np.arange(n)
    for _ in range(max_iter):
        p = 1.0 / (1.0 + np.exp(-(theta[:, :, None] - theta[:, None, :])))  # P(i beats j)
        q = 1.0 / (1.0 + np.exp(-theta))  # P(i beats the reference)
        grad = np.sum(wins - n_games * p, axis=2) + prior * (1.0 - 2.0 * q)
        curvature = n_games * p * (1.0 - p)
        hess = curvature.copy()
        hess[:, diag, diag] = -np.sum(curvature, axis=2) - 2.0 * prior * q * (1.0 - q)
        step = np.linalg.solve(hess, -grad[:, :, None])[:, :, 0]
        scale = np.ones(batch)
        while True:  # backtracking keeps every step an ascent step
            candidate = theta + scale[:, None] * step
            value = objective(candidate)
            worse = (value < current - 1e-12) & (scale > 1e-6)
            if not worse.any():
                break
            scale[worse] *= 0.5
        theta, current = candidate, value
        if np.max(np.abs(scale[:, None] * step)) < tol:
            break
    return theta


def _bt_rating(theta: np.ndarray) -> np.ndarray:
    return BT_SCALE * theta + ELO_BASE


# ---- the standings of one scope (one game, or all games) -------------------------------------------
class _Scope:
    """Everything the three systems need, updated one result at a time. `leaderboard` and
    `OnlineRatings` both use this class, which is what makes them agree exactly."""

    def __init__(self, model: str = "plackett_luce", elo_k: float = 32.0, systems: Iterable[str] = SYSTEMS, pooling: str = "games") -> None:
        self.model_name = model
        self.pooling = pooling
        self.model = _openskill_model(model)
        self.elo_k = float(elo_k)
        self.systems = frozenset(systems)
        self.trueskill: dict[str, tuple[float, float]] = {}  # policy -> (mu, sigma)
        self.elo: dict[str, float] = {}
        self.counts: dict[str, list[int]] = {}  # policy -> [games, wins, draws, losses]
        # game -> (a, b) with a < b -> [comparison weight, a's weighted score]; weights are 1/(n-1),
        # kept per game so pooling can weigh each game equally at fit time.
        self.bt_pairs: dict[str, dict[tuple[str, str], list[float]]] = {}
        self.bt_matches: dict[str, int] = {}  # game -> rated matches

    def fold(self, result: GameResult) -> None:
        if not is_rated(result):
            return  # self-play or a one-player game: nothing about relative strength
        best = standings(result)
        for name in best:
            row = self.counts.setdefault(name, [0, 0, 0, 0])
            row[0] += 1
            row[{"win": 1, "draw": 2, "loss": 3}[outcome_of(result, name)]] += 1
        if "trueskill" in self.systems:
            self._fold_trueskill(best)
        if "elo" in self.systems:
            self._fold_elo(result, len(best))
        if "bt" in self.systems:
            self._fold_bt(result, len(best))

    def _fold_trueskill(self, best: dict[str, int]) -> None:
        names = list(best)
        teams = []
        for name in names:
            mu, sigma = self.trueskill.get(name, (None, None))
            rating = self.model.rating() if mu is None else self.model.rating(mu=mu, sigma=sigma)
            teams.append([rating])
        rated = self.model.rate(teams, ranks=[best[n] for n in names])
        for name, team in zip(names, rated):
            self.trueskill[name] = (float(team[0].mu), float(team[0].sigma))

    def _fold_elo(self, result: GameResult, distinct: int) -> None:
        before = {name: self.elo.get(name, ELO_BASE) for name in standings(result)}
        factor = self.elo_k / (distinct - 1)
        delta = dict.fromkeys(before, 0.0)
        for a, b, score in pairwise(result):
            expected = 1.0 / (1.0 + 10.0 ** ((before[b] - before[a]) / 400.0))
            delta[a] += factor * (score - expected)
            delta[b] -= factor * (score - expected)
        for name in before:
            self.elo[name] = before[name] + delta[name]

    def _fold_bt(self, result: GameResult, distinct: int) -> None:
        table = self.bt_pairs.setdefault(result.game_id, {})
        self.bt_matches[result.game_id] = self.bt_matches.get(result.game_id, 0) + 1
        weight = 1.0 / (distinct - 1)
        for a, b, score in pairwise(result):
            if b < a:
                a, b, score = b, a, 1.0 - score
            cell = table.setdefault((a, b), [0.0, 0.0])
            cell[0] += weight
            cell[1] += weight * score

    # ---- reading -------------------------------------------------------------------------------
    def names(self) -> list[str]:
        return sorted(self.counts)

    def game_weights(self) -> dict[str, float]:
        """Weight of one match of each game when pooled (`_pooling_weights`)."""
        return _pooling_weights(self.bt_matches, self.pooling)

    def bt_theta(self) -> np.ndarray:
        return bt_solve(*self.bt_matrices())[0]

    def bt_matrices(self, names: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(1, n, n) comparison weights and scores over `names` (default: every rated policy),
        games pooled as `self.pooling` says."""
        names = self.names() if names is None else list(names)
        index = {name: i for i, name in enumerate(names)}
        n_games = np.zeros((1, len(names), len(names)))
        wins = np.zeros_like(n_games)
        for game, weight in self.game_weights().items():
            for (a, b), (count, score) in sorted(self.bt_pairs[game].items()):
                i, j = index[a], index[b]
                n_games[0, i, j] += weight * count
                n_games[0, j, i] += weight * count
                wins[0, i, j] += weight * score
                wins[0, j, i] += weight * (count - score)
        return n_games, wins

    def rows(self, by: str) -> list[RatingRow]:
        _check_system(by)
        if by not in self.systems:
            raise ValueError(f"these standings were built without {by!r}")
        rows: list[RatingRow] = []
        if by == "trueskill":
            for name, (mu, sigma) in self.trueskill.items():
                rows.append(RatingRow(name, mu - 3 * sigma, mu - 1.96 * sigma, mu + 1.96 * sigma, extra={"mu": mu, "sigma": sigma}))
        elif by == "elo":
            rows = [RatingRow(name, value, value, value) for name, value in self.elo.items()]
        else:
            theta = self.bt_theta()
            rows = [
                RatingRow(name, float(_bt_rating(theta[i])), float(_bt_rating(theta[i])), float(_bt_rating(theta[i])), extra={"log_strength": float(theta[i])})
                for i, name in enumerate(self.names())
            ]
        for row in rows:
            row.games, row.wins, row.draws, row.losses = self.counts[row.policy]
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {
            "trueskill": {k: list(v) for k, v in self.trueskill.items()},
            "elo": dict(self.elo),
            "counts": {k: list(v) for k, v in self.counts.items()},
            "bt_pairs": {g: [[a, b, c, s] for (a, b), (c, s) in t.items()] for g, t in self.bt_pairs.items()},
            "bt_matches": dict(self.bt_matches),
        }

    def load(self, state: dict[str, Any]) -> None:
        self.trueskill = {k: (float(v[0]), float(v[1])) for k, v in state["trueskill"].items()}
        self.elo = {k: float(v) for k, v in state["elo"].items()}
        self.counts = {k: [int(x) for x in v] for k, v in state["counts"].items()}
        self.bt_pairs = {g: {(a, b): [float(c), float(s)] for a, b, c, s in t} for g, t in state["bt_pairs"].items()}
        self.bt_matches = {g: int(m) for g, m in state["bt_matches"].items()}


# ---- ranking -----------------------------------------------------------------------------------
def rank_by_upper_bound(rows: list[RatingRow]) -> None:
    """rank = 1 + number of policies whose lower bound is above this one's upper bound."""
    lows = np.array([row.lo for row in rows])
    for row in rows:
        row.rank = 1 + int(np.sum(lows > row.hi))


def _finish(rows: list[RatingRow], by: str) -> list[RatingRow]:
    rows.sort(key=lambda r: (-r.rating, r.policy))
    rank_by_upper_bound(rows)  # for Elo (lo = hi) this is the plain order, ties sharing a rank
    return rows


# ---- Bradley-Terry bootstrap --------------------------------------------------------------------------
def _comparison_arrays(results: Sequence[GameResult], names: list[str], pooling: str = "games") -> dict[str, np.ndarray]:
    """One row per pairwise comparison of the rated results: policy indices i < j (by name), i's
    score, its weight (1/(n-1) x the game's pooling weight), its match and that match's game."""
    index = {name: k for k, name in enumerate(names)}
    rated = [r for r in results if is_rated(r)]
    per_game: dict[str, int] = defaultdict(int)
    for result in rated:
        per_game[result.game_id] += 1
    games = sorted(per_game)
    weights = _pooling_weights(per_game, pooling)
    cols: dict[str, list] = {"i": [], "j": [], "score": [], "weight": [], "match": []}
    match_game: list[int] = []
    for m, result in enumerate(rated):
        match_game.append(games.index(result.game_id))
        distinct = len(standings(result))
        for a, b, score in pairwise(result):
            i, j = index[a], index[b]
            if j < i:
                i, j, score = j, i, 1.0 - score
            cols["i"].append(i)
            cols["j"].append(j)
            cols["score"].append(score)
            cols["weight"].append(weights[result.game_id] / (distinct - 1))
            cols["match"].append(m)
    arrays = {k: np.asarray(v, dtype=float if k in ("score", "weight") else np.int64) for k, v in cols.items()}
    arrays["match_game"] = np.asarray(match_game, dtype=np.int64)
    return arrays


def bt_bootstrap(results: Sequence[GameResult], names: list[str], bootstrap: int, seed: int, pooling: str = "games") -> np.ndarray:
    """(bootstrap, n) log-strengths, one fit per resample of the matches (drawn with replacement
    within each game, so every game keeps its match count and its pooling weight). All resamples
    are aggregated with one sparse product and solved as one batch."""
    arrays = _comparison_arrays(results, names, pooling)
    n, matches = len(names), len(arrays["match_game"])
    rng = np.random.default_rng(seed)
    # counts[b, m] = how many times resample b drew match m
    counts = np.zeros((bootstrap, matches))
    for g in range(int(arrays["match_game"].max()) + 1 if matches else 0):
        members = np.flatnonzero(arrays["match_game"] == g)
        draws = rng.integers(0, len(members), size=(bootstrap, len(members)))
        offsets = (np.arange(bootstrap)[:, None] * len(members) + draws).ravel()
        counts[:, members] = np.bincount(offsets, minlength=bootstrap * len(members)).reshape(bootstrap, len(members))
    # cell (i, j) of every comparison, as a sparse comparisons x n^2 map
    comparisons = len(arrays["i"])
    cell = arrays["i"] * n + arrays["j"]
    weight_map = sparse.csr_matrix((arrays["weight"], (np.arange(comparisons), cell)), shape=(comparisons, n * n))
    score_map = sparse.csr_matrix((arrays["weight"] * arrays["score"], (np.arange(comparisons), cell)), shape=(comparisons, n * n))
    thetas = np.empty((bootstrap, n))
    chunk = max(1, _BOOTSTRAP_CELLS // max(1, comparisons))
    for start in range(0, bootstrap, chunk):
        drawn = counts[start : start + chunk][:, arrays["match"]]  # (chunk, comparisons)
        upper = np.asarray((weight_map.T @ drawn.T).T).reshape(-1, n, n)  # i < j only
        score = np.asarray((score_map.T @ drawn.T).T).reshape(-1, n, n)
        n_games = upper + upper.transpose(0, 2, 1)
        wins = score + (upper - score).transpose(0, 2, 1)
        thetas[start : start + chunk] = bt_solve(n_games, wins, tol=1e-8)
    return thetas


# ---- Bradley-Terry sandwich (robust) covariance -----------------------------------------------------
def bt_sandwich(results: Sequence[GameResult], names: list[str], theta: np.ndarray, prior: float = BT_PRIOR, pooling: str = "games") -> np.ndarray:
    """(n, n) sandwich covariance of the log-strengths theta fitted by `bt_solve` (Huber 1967,
    White 1980; LMArena's default interval):

        Cov(theta) = H^-1 B H^-1,
        H = -Hessian of the prior-regularised log-likelihood at theta
          = sum_c w_c p_c (1 - p_c) x_c x_c^T + prior diag(2 q_i (1 - q_i)),
        B = sum_m g_m g_m^T,   g_m = sum_{c in match m} w_c (s_c - p_c) x_c,

    over comparisons c = (a, b) with x_c = e_a - e_b, p_c = sig(theta_a - theta_b), q_i =
    sig(theta_i) and the weights w_c of the fit. The matches are the independent units (the
    bootstrap resamples them too), so the comparisons of one N-player match form one cluster;
    for two-player matches B is LMArena's sum over battles. Unlike the model-based inverse
    Hessian, B measures the spread of the scores the data actually show, so the interval stays
    honest when the model is wrong (e.g. strengths that differ by game)."""
    arrays = _comparison_arrays(results, names, pooling)
    n, matches = len(names), len(arrays["match_game"])
    i, j, w = arrays["i"], arrays["j"], arrays["weight"]
    p = 1.0 / (1.0 + np.exp(-(theta[i] - theta[j])))
    q = 1.0 / (1.0 + np.exp(-theta))
    hessian = np.diag(2.0 * prior * q * (1.0 - q))
    curvature = w * p * (1.0 - p)
    np.add.at(hessian, (i, i), curvature)
    np.add.at(hessian, (j, j), curvature)
    np.add.at(hessian, (i, j), -curvature)
    np.add.at(hessian, (j, i), -curvature)
    residual = w * (arrays["score"] - p)
    scores = np.zeros((matches, n))  # g_m, one row per match
    np.add.at(scores, (arrays["match"], i), residual)
    np.add.at(scores, (arrays["match"], j), -residual)
    bread = np.linalg.inv(hessian)
    covariance = bread @ (scores.T @ scores) @ bread
    return 0.5 * (covariance + covariance.T)  # exactly symmetric despite rounding


# ---- public API ----------------------------------------------------------------------------------
def leaderboard(
    results: Sequence[GameResult],
    by: str = "trueskill",
    game: str | None = None,
    *,
    bootstrap: int = 200,
    seed: int = 0,
    elo_k: float = 32.0,
    model: str = "plackett_luce",
    ci: str = "bootstrap",
    pooling: str = "games",
) -> list[RatingRow]:
    """Rows sorted best first, ranked by the upper-bound rule. `game=None` rates across all games
    (TrueSkill and Elo fold every game into one rating; Bradley-Terry pools the games: each game
    weighs the same with `pooling="games"`, each match once with `pooling="matches"`).
    Bradley-Terry's 95% CI: `ci="bootstrap"` from `bootstrap` resamples (0: no interval) or
    `ci="sandwich"` from the robust covariance (`bt_sandwich`; `bootstrap` is then unused)."""
    _check_system(by)
    _check_bt_options(ci, pooling)
    chosen = for_game(results, game)
    scope = _Scope(model, elo_k, systems=(by,), pooling=pooling)
    for result in chosen:
        scope.fold(result)
    rows = scope.rows(by)
    if by == "bt" and len(scope.names()) > 0 and sum(scope.bt_matches.values()) >= 2:
        names = scope.names()
        by_name = {row.policy: row for row in rows}
        if ci == "sandwich":
            theta = np.array([by_name[name].extra["log_strength"] for name in names])
            variance = np.diag(bt_sandwich(chosen, names, theta, pooling=pooling))
            half = NORMAL_95 * np.sqrt(np.maximum(variance, 0.0))  # all-tied logs: 0 up to rounding
            low, high = theta - half, theta + half
        elif bootstrap > 0:
            low, high = np.percentile(bt_bootstrap(chosen, names, bootstrap, seed, pooling), [2.5, 97.5], axis=0)
        else:
            return _finish(rows, by)
        for i, name in enumerate(names):
            row = by_name[name]
            # A percentile interval can miss a point estimate at the edge of the prior; widen it.
            row.lo = min(float(_bt_rating(low[i])), row.rating)
            row.hi = max(float(_bt_rating(high[i])), row.rating)
    return _finish(rows, by)


def trueskill(results: Sequence[GameResult], model: str = "plackett_luce") -> dict[str, tuple[float, float]]:
    """policy -> (mu, sigma) after folding the results in order."""
    scope = _Scope(model, systems=("trueskill",))
    for result in results:
        scope.fold(result)
    return dict(scope.trueskill)


def elo(results: Sequence[GameResult], k: float = 32.0) -> dict[str, float]:
    scope = _Scope(elo_k=k, systems=("elo",))
    for result in results:
        scope.fold(result)
    return dict(scope.elo)


def bt_log_strengths(results: Sequence[GameResult], names: Sequence[str]) -> np.ndarray:
    """Point-estimate log-strengths in the order of `names` (0 for a policy with no rated game)."""
    scope = _Scope(systems=("bt",))
    for result in results:
        scope.fold(result)
    return bt_solve(*scope.bt_matrices(names))[0]


def bradley_terry(results: Sequence[GameResult], bootstrap: int = 200, seed: int = 0, ci: str = "bootstrap", pooling: str = "games") -> dict[str, tuple[float, float, float]]:
    """policy -> (rating, lo95, hi95) on the Elo scale, pooled across games."""
    rows = leaderboard(results, "bt", bootstrap=bootstrap, seed=seed, ci=ci, pooling=pooling)
    return {row.policy: (row.rating, row.lo, row.hi) for row in rows}


class OnlineRatings:
    """Live standings folded one result at a time, for every system, overall and per game.

    `rows(by, game)` equals `leaderboard(log, by, game, bootstrap=0)` exactly for the log folded so
    far (same code, same order); Bradley-Terry is refitted from per-pair tallies on each call
    (a few milliseconds), with no interval. `to_dict`/`from_dict` carry the state across processes
    as plain JSON."""

    def __init__(self, model: str = "plackett_luce", elo_k: float = 32.0, systems: Sequence[str] = SYSTEMS) -> None:
        for system in systems:
            _check_system(system)
        self.model = model
        self.elo_k = float(elo_k)
        self.systems = tuple(systems)
        self.folded = 0
        self._overall = _Scope(model, elo_k, self.systems)
        self._games: dict[str, _Scope] = {}

    @property
    def overall(self) -> _Scope:
        """The pooled standings (schedulers read the Bradley-Terry tallies from here)."""
        return self._overall

    def fold(self, result: GameResult) -> None:
        self._overall.fold(result)
        if result.game_id not in self._games:
            self._games[result.game_id] = _Scope(self.model, self.elo_k, self.systems)
        self._games[result.game_id].fold(result)
        self.folded += 1

    def games(self) -> list[str]:
        return sorted(self._games)

    def rows(self, by: str = "trueskill", game: str | None = None) -> list[RatingRow]:
        _check_system(by)
        if game is None:
            scope = self._overall
        elif game in self._games:
            scope = self._games[game]
        else:
            return []
        return _finish(scope.rows(by), by)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "elo_k": self.elo_k,
            "systems": list(self.systems),
            "folded": self.folded,
            "overall": self._overall.to_dict(),
            "games": {g: s.to_dict() for g, s in self._games.items()},
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> "OnlineRatings":
        online = cls(state["model"], state["elo_k"], state.get("systems", SYSTEMS))
        online.folded = int(state["folded"])
        online._overall.load(state["overall"])
        for game, scope_state in state["games"].items():
            online._games[game] = _Scope(online.model, online.elo_k, online.systems)
            online._games[game].load(scope_state)
        return online
