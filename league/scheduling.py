"""Who plays whom next. Every scheduler is a pure function of (league seed, finished results,
number of pairings issued), so a resumed league hands out the same kind of work, and every
pairing carries a key that is unique within the league (resume matches stored work by key).
Formulas and measurements: docs/ratings.md.

- round_robin: every group of `num_players` policies meets `matches_per_pair` times per game
  (x the game's weight, rounded), all groups once before any repeat; seats rotate so each policy
  sits in each seat equally often. With a budget instead, whole cycles repeat until the budget.
- swiss: rounds; each round groups policies with similar scores (wins + half draws), avoiding
  rematches where possible; the next round is issued once the current one has finished.
- fixed: an explicit list of matches (game, seats, seed) played in the order given; what a
  frozen benchmark suite needs (evaluation/suites), where nothing may depend on earlier results.
- adaptive: each pairing goes to the group whose game is expected to shrink the uncertainty of the
  ranking most, under the Laplace posterior of the Bradley-Terry fit; the first seat goes to
  whoever is furthest below an even share of first seats in its own games.
N-player games fill seats with groups of distinct policies (rotating groups in round_robin,
score-ordered groups in swiss, greedily grown informative groups in adaptive).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np
from scipy.stats import norm

from league.ratings import BT_PRIOR, OnlineRatings, bt_solve
from league.results import GameResult, pairwise

KINDS = ("round_robin", "swiss", "adaptive", "fixed")


@dataclass(frozen=True)
class GameSlot:
    game_id: str
    weight: float = 1.0  # share of the matches (round_robin: repeats x weight; others: how often it is picked)
    num_players: int = 2


@dataclass(frozen=True)
class Pairing:
    key: str  # unique and deterministic within a league: resume matches finished work by it
    game_id: str
    seats: tuple[str, ...]
    seed: int


class Scheduler(Protocol):
    def next_pairings(self, finished: Sequence[GameResult], issued: int, limit: int) -> list[Pairing]: ...

    def total(self) -> int | None: ...


def stable_seed(*parts: object) -> int:
    """A seed from text, stable across processes and Python versions (unlike hash())."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _pairing(prefix: str, slot: GameSlot, seats: Sequence[str], seed: int, *parts: object) -> Pairing:
    key = ":".join([prefix, slot.game_id, *map(str, parts)])
    return Pairing(key, slot.game_id, tuple(seats), stable_seed(seed, key))


def _match_scores(result: GameResult) -> dict[str, float]:
    """Each policy's share of the pairwise points of one match (1 win, 0.5 draw, 0 loss for two players)."""
    points: Counter[str] = Counter()
    names = set(result.players)
    for a, b, score in pairwise(result):
        points[a] += score
        points[b] += 1.0 - score
    return {name: points[name] / max(1, len(names) - 1) for name in names}


def _game_sequence(games: Sequence[GameSlot], count: int) -> list[GameSlot]:
    """Smooth weighted round-robin over games: after any prefix, game g has had about weight_g /
    sum(weights) of the matches (the same interleaving nginx uses for weighted upstreams)."""
    total = sum(slot.weight for slot in games)
    current = [0.0] * len(games)
    out: list[GameSlot] = []
    for _ in range(count):
        for g, slot in enumerate(games):
            current[g] += slot.weight
        pick = max(range(len(games)), key=lambda g: (current[g], -g))
        current[pick] -= total
        out.append(games[pick])
    return out


# ---- fixed -------------------------------------------------------------------------------------------
class FixedSchedule:
    """The pairings given, in order: a pure function of `issued`, so a resumed run continues
    exactly where the killed one stopped handing out work."""

    def __init__(self, pairings: Sequence[Pairing]) -> None:
        keys = [p.key for p in pairings]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"fixed schedule: match keys must be unique; repeated: {', '.join(repeated[:3])}")
        self.pairings = list(pairings)

    def next_pairings(self, finished: Sequence[GameResult], issued: int, limit: int) -> list[Pairing]:
        return self.pairings[issued : issued + limit]

    def total(self) -> int | None:
        return len(self.pairings)


# ---- round robin ------------------------------------------------------------------------------------
class RoundRobin:
    def __init__(self, games: Sequence[GameSlot], policies: Sequence[str], matches_per_pair: int | None, budget: int | None, seed: int) -> None:
        names = sorted(policies)
        cycles: list[list[Pairing]] = []  # cycles[r]: every group's r-th meeting in every game
        repeats = {slot.game_id: max(1, round((matches_per_pair or 1) * slot.weight)) for slot in games}
        most = max(repeats.values())
        if matches_per_pair is None and budget is not None:
            groups_per_cycle = sum(math.comb(len(names), slot.num_players) for slot in games)
            most = max(1, math.ceil(budget / max(1, groups_per_cycle)))
            repeats = dict.fromkeys(repeats, most)
        seat_count: Counter[tuple[str, int, int]] = Counter()  # (game, seat, policy index)
        for repeat in range(most):
            cycle: list[Pairing] = []
            for slot in games:
                if repeat >= repeats[slot.game_id]:
                    continue
                for group in itertools.combinations(range(len(names)), slot.num_players):
                    # Seats: the rotation whose policies have sat least in those seats so far, ties
                    # broken by (repeat + index sum), which alone swaps colours between repeats and,
                    # within one cycle, gives everyone the first seat in about half its 2-player games.
                    k = len(group)
                    preferred = (repeat + sum(group)) % k
                    rotations = [group[sh:] + group[:sh] for sh in range(k)]
                    orders = rotations[preferred:] + rotations[:preferred]
                    if k <= 4:  # small groups: any seat order, so seat counts can even out exactly
                        orders += [o for o in itertools.permutations(group) if o not in rotations]
                    rotated = min(orders, key=lambda o: sum(seat_count[(slot.game_id, s, i)] for s, i in enumerate(o)))
                    seat_count.update((slot.game_id, s, i) for s, i in enumerate(rotated))
                    seats = [names[i] for i in rotated]
                    cycle.append(_pairing("rr", slot, seats, seed, "|".join(names[i] for i in group), repeat))
            order = np.random.default_rng(stable_seed(seed, "rr-order", repeat)).permutation(len(cycle))
            cycles.append([cycle[i] for i in order])  # interleave games and groups within a cycle
        self.plan = [p for cycle in cycles for p in cycle]
        if budget is not None:
            self.plan = self.plan[:budget]

    def next_pairings(self, finished: Sequence[GameResult], issued: int, limit: int) -> list[Pairing]:
        return self.plan[issued : issued + max(0, limit)]

    def total(self) -> int | None:
        return len(self.plan)


# ---- Swiss ----------------------------------------------------------------------------------------------
class Swiss:
    """Rounds: in each game, policies sorted by total score (random tie-breaks) are cut into groups
    of the game's size, each group formed from the best-placed free policy and the next free ones it
    has not met in that game (rematches only when nobody else is left). When the policies do not
    divide into groups, the lowest-placed policies with the fewest byes sit the round out."""

    def __init__(self, games: Sequence[GameSlot], policies: Sequence[str], rounds: int | None, budget: int | None, seed: int) -> None:
        self.games = list(games)
        self.policies = sorted(policies)
        self.seed = seed
        self.per_round = sum(len(self.policies) // slot.num_players for slot in self.games)
        if rounds is None:
            rounds = math.ceil(budget / self.per_round) if budget else max(1, math.ceil(math.log2(len(self.policies)))) + 1
        self.rounds = rounds
        self.budget = min(budget, rounds * self.per_round) if budget else rounds * self.per_round

    def total(self) -> int | None:
        return self.budget

    def next_pairings(self, finished: Sequence[GameResult], issued: int, limit: int) -> list[Pairing]:
        if issued >= self.budget or len(finished) < issued or issued % self.per_round:
            return []  # the league is done, or the current round is still being played
        round_no = issued // self.per_round
        score: Counter[str] = Counter()
        met: dict[str, Counter[frozenset[str]]] = {slot.game_id: Counter() for slot in self.games}
        byes: Counter[str] = Counter()
        played: Counter[str] = Counter()
        for result in finished:
            score.update(_match_scores(result))
            played.update(set(result.players))
            for a, b in itertools.combinations(sorted(set(result.players)), 2):
                met.setdefault(result.game_id, Counter())[frozenset((a, b))] += 1
        rng = np.random.default_rng(stable_seed(self.seed, "swiss", round_no))
        tiebreak = {name: rng.random() for name in self.policies}
        order = sorted(self.policies, key=lambda p: (-score[p], tiebreak[p]))
        out: list[Pairing] = []
        for slot in self.games:
            k = slot.num_players
            sitting_out = len(order) % k
            # Byes: the lowest-placed among those who have played the most.
            out_of_round = set(sorted(order, key=lambda p: (-played[p] + byes[p], -order.index(p)))[:sitting_out]) if sitting_out else set()
            byes.update(out_of_round)
            free = [p for p in order if p not in out_of_round]
            seen = met[slot.game_id]
            while len(free) >= k:
                group = [free.pop(0)]
                while len(group) < k:
                    fresh = next((p for p in free if all(seen[frozenset((p, q))] == 0 for q in group)), None)
                    pick = fresh if fresh is not None else min(free, key=lambda p: sum(seen[frozenset((p, q))] for q in group))
                    free.remove(pick)
                    group.append(pick)
                # Seats: rotate by round so each policy takes each seat in turn over the rounds.
                shift = (round_no + sum(self.policies.index(p) for p in group)) % k
                seats = group[shift:] + group[:shift]
                out.append(_pairing("swiss", slot, seats, self.seed, round_no, "|".join(sorted(group))))
        # A round is handed out whole, whatever `limit` is: the runner queues what it cannot start
        # yet. Handing out part of a round would leave `issued` off a round boundary for good.
        return out[: self.budget - issued]


# ---- adaptive -------------------------------------------------------------------------------------------
def laplace_posterior(n_games: np.ndarray, wins: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(theta, p, cov): the league's Bradley-Terry fit (prior included), P(i beats j) under it, and
    the Laplace approximation of the posterior covariance, (-Hessian of the log posterior)^-1."""
    theta = bt_solve(n_games, wins)[0]
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    curvature = n_games[0] * p * (1.0 - p)
    q = 1.0 / (1.0 + np.exp(-theta))
    information = np.diag(curvature.sum(axis=1) + 2.0 * BT_PRIOR * q * (1.0 - q)) - curvature
    return theta, p, np.linalg.inv(information)


def doubt_weighted_variance_drop(theta: np.ndarray, p: np.ndarray, cov: np.ndarray, chunk: int = 256) -> np.ndarray:
    """Score of one more game for every candidate pair (a, b), in np.triu_indices order.

    Pair (i, j) has d = theta_i - theta_j, s^2 = Var(d) and P(order wrong) = Phi(-|d| / s). A game
    a-b adds Fisher information f = p_ab (1 - p_ab) along e_a - e_b, which lowers every s_ij^2 by
    f (u_i - u_j)^2 / (1 + f s_ab^2) with u = cov (e_a - e_b) (Sherman-Morrison). The score is
    sum_ij Phi(-|d_ij| / s_ij) * (drop of s_ij^2) / s_ij^2: the relative uncertainty a game removes,
    counted where the leaderboard's order is in doubt."""
    i, j = np.triu_indices(len(theta), 1)
    var = np.maximum(cov[i, i] + cov[j, j] - 2.0 * cov[i, j], 1e-12)
    doubt = norm.cdf(-np.abs(theta[i] - theta[j]) / np.sqrt(var)) / var
    # Pairs whose order is beyond doubt add nothing measurable; leaving them out keeps big leagues fast.
    kept = doubt * var > 1e-6
    wi, wj, weight = i[kept], j[kept], doubt[kept]
    f = p[i, j] * (1.0 - p[i, j])
    scores = np.empty(len(i))
    for lo in range(0, len(i), chunk):  # (doubtful pairs x chunk) at a time: bounded memory
        part = slice(lo, lo + chunk)
        u = cov[:, i[part]] - cov[:, j[part]]  # column c: cov (e_a - e_b) for candidate c
        scores[part] = weight @ (u[wi, :] - u[wj, :]) ** 2 * f[part] / (1.0 + f[part] * var[part])
    return scores


def _as_if_played(cov: np.ndarray, p: np.ndarray, a: int, b: int, weight: float) -> None:
    """Shrink cov in place as one game between a and b (comparison weight `weight`) would."""
    u = cov[:, a] - cov[:, b]
    f = weight * p[a, b] * (1.0 - p[a, b])
    cov -= f * np.outer(u, u) / (1.0 + f * (u[a] - u[b]))


def _first_seats_owed(finished: Sequence[GameResult]) -> Counter[tuple[str, str]]:
    """(game, policy) -> first seats it is owed: its even share (1/size of each match it played)
    minus the first seats it had. Balancing this, not raw first-seat counts, stays fair when the
    adaptive scheduler gives some policies many more games than others."""
    owed: Counter[tuple[str, str]] = Counter()
    for result in finished:
        for name in result.players:
            owed[(result.game_id, name)] += 1.0 / len(result.players)
        owed[(result.game_id, result.players[0])] -= 1.0
    return owed


def _seeded_argmax(values: np.ndarray, rng: np.random.Generator) -> int:
    """Index of the largest value. Values within a relative 1e-9 of it are ties (the first batch
    is all ties), broken by the seeded rng rather than by rounding noise or position."""
    top = values.max()
    tied = np.flatnonzero(values >= top - 1e-9 * abs(top))
    return int(tied[rng.integers(len(tied))])


class Adaptive:
    """Active ranking on the Laplace approximation of the Bradley-Terry posterior: each pairing is
    the one with the best `doubt_weighted_variance_drop`, under the same prior-regularised fit the
    leaderboard shows. Within one call each pick shrinks the covariance as if it had been played, so
    a batch of matches in flight spreads over different pairs instead of repeating the best one.
    Multi-player groups grow from the best pair by adding the policy whose pairs with the group
    score highest. Measured against the alternatives tried: docs/experiments/adaptive-scheduling.md.
    """

    def __init__(self, games: Sequence[GameSlot], policies: Sequence[str], budget: int, seed: int) -> None:
        self.games = list(games)
        self.policies = sorted(policies)
        self.budget = budget
        self.seed = seed
        self._sequence: list[GameSlot] = []
        self._ratings = OnlineRatings(systems=("bt",))
        self._folded: list[GameResult] = []  # the prefix of `finished` folded into _ratings
        for slot in self.games:
            if slot.num_players > len(self.policies):
                raise ValueError(f"game {slot.game_id} needs {slot.num_players} players but the league has {len(self.policies)} policies")

    def total(self) -> int | None:
        return self.budget

    def _standings(self, finished: Sequence[GameResult]) -> OnlineRatings:
        """Fold only what is new; refold from scratch if `finished` is not an extension of what
        was seen (the result is the same either way: folding is a pure function of the log)."""
        seen = len(self._folded)
        if len(finished) < seen or (seen and finished[seen - 1] != self._folded[-1]):
            self._ratings, self._folded = OnlineRatings(systems=("bt",)), []
        for result in finished[len(self._folded) :]:
            self._ratings.fold(result)
            self._folded.append(result)
        return self._ratings

    def next_pairings(self, finished: Sequence[GameResult], issued: int, limit: int) -> list[Pairing]:
        count = min(max(0, limit), self.budget - issued)
        if count <= 0:
            return []
        theta, p, cov = laplace_posterior(*self._standings(finished).overall.bt_matrices(self.policies))
        seats_owed = _first_seats_owed(finished)
        while len(self._sequence) < issued + count:
            self._sequence = _game_sequence(self.games, max(2 * len(self._sequence), issued + count, 64))
        out: list[Pairing] = []
        for index in range(issued, issued + count):
            slot = self._sequence[index]
            rng = np.random.default_rng(stable_seed(self.seed, "adaptive", index))
            group = self._best_group(theta, p, cov, slot.num_players, rng)
            for a, b in itertools.combinations(group, 2):  # as if the game were played
                _as_if_played(cov, p, a, b, 1.0 / (slot.num_players - 1))
            names = [self.policies[i] for i in group]
            # Fair seats: whoever is owed most first seats in this game goes first; the rest rotate.
            lead = max(range(len(names)), key=lambda i: (seats_owed[(slot.game_id, names[i])], rng.random()))
            seats = names[lead:] + names[:lead]
            for name in seats:
                seats_owed[(slot.game_id, name)] += 1.0 / len(seats)
            seats_owed[(slot.game_id, seats[0])] -= 1.0
            out.append(_pairing("adaptive", slot, seats, self.seed, index))
        return out

    def _best_group(self, theta: np.ndarray, p: np.ndarray, cov: np.ndarray, size: int, rng: np.random.Generator) -> list[int]:
        n = len(theta)
        i, j = np.triu_indices(n, 1)
        score = doubt_weighted_variance_drop(theta, p, cov)
        best = _seeded_argmax(score, rng)
        group = [int(i[best]), int(j[best])]
        pair_score = np.zeros((n, n))
        pair_score[i, j] = pair_score[j, i] = score
        while len(group) < size:
            rest = [k for k in range(n) if k not in group]
            group.append(max(rest, key=lambda k: float(pair_score[k, group].sum())))
        return group[:size]  # a one-player game takes the first of the pair


def make_scheduler(
    kind: str,
    games: Sequence[GameSlot],
    policies: Sequence[str],
    *,
    matches_per_pair: int | None = None,
    budget: int | None = None,
    rounds: int | None = None,
    seed: int = 0,
    fixed: Sequence[Pairing] = (),
) -> Scheduler:
    """Build a scheduler; bad arguments raise ValueError with one line naming the problem."""
    if len(set(policies)) != len(policies):
        raise ValueError("policy names must be unique")
    if len(policies) < 2:
        raise ValueError("a league needs at least two different policies")
    if not games:
        raise ValueError("a league needs at least one game")
    for slot in games:
        if slot.num_players > len(policies):
            raise ValueError(f"game {slot.game_id} needs {slot.num_players} players but the league has {len(policies)} policies")
        if slot.num_players < 1 or slot.weight <= 0:
            raise ValueError(f"game {slot.game_id}: players must be >= 1 and weight > 0")
    for name, value in (("matches_per_pair", matches_per_pair), ("budget", budget), ("rounds", rounds)):
        if value is not None and value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if kind == "fixed":
        if not fixed:
            raise ValueError("the fixed scheduler needs `matches` (the list of matches to play)")
        known = {slot.game_id: slot.num_players for slot in games}
        for pairing in fixed:
            if pairing.game_id not in known:
                raise ValueError(f"match {pairing.key}: game {pairing.game_id} is not among the league's games")
            if len(pairing.seats) != known[pairing.game_id]:
                raise ValueError(f"match {pairing.key}: {pairing.game_id} seats {known[pairing.game_id]} players, not {len(pairing.seats)}")
            unknown = sorted(set(pairing.seats) - set(policies))
            if unknown:
                raise ValueError(f"match {pairing.key}: unknown policy {unknown[0]!r}")
        return FixedSchedule(fixed)
    if kind == "round_robin":
        return RoundRobin(games, policies, matches_per_pair, budget, seed)
    if kind == "swiss":
        return Swiss(games, policies, rounds, budget, seed)
    if kind == "adaptive":
        if budget is None:
            raise ValueError("the adaptive scheduler needs a budget (number of matches)")
        return Adaptive(games, policies, budget, seed)
    raise ValueError(f"unknown scheduler {kind!r} (choose {', '.join(KINDS)})")
