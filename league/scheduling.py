"""Who plays whom next. Every scheduler is a pure function of (league seed, finished results,
number of pairings issued), so a resumed league hands out the same kind of work, and every
pairing carries a key that is unique within the league (resume matches stored work by key).
Formulas and measurements: docs/ratings.md.

- round_robin: every group of `num_players` policies meets `matches_per_pair` times per game
  (x the game's weight, rounded), all groups once before any repeat; seats rotate so each policy
  sits in each seat equally often. With a budget instead, whole cycles repeat until the budget.
- swiss: rounds; each round groups policies with similar scores (wins + half draws), avoiding
  rematches where possible; the next round is issued once the current one has finished.
- adaptive: each pairing goes to the group whose game is expected to shrink the uncertainty of the
  ranking most, under the Laplace posterior of the Bradley-Terry fit; seats go to whoever has sat
  first least.
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

KINDS = ("round_robin", "swiss", "adaptive")


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
class Adaptive:
    """Active ranking under the Laplace approximation of the Bradley-Terry posterior.

    With log-strengths theta (the prior-regularised fit) and covariance S = (-Hessian)^-1, pair
    (i, j) has d_ij = theta_i - theta_j, s_ij^2 = Var(d_ij) and chance Phi(-|d_ij| / s_ij) that its
    current order is wrong. One game between a and b adds Fisher information f = p(1 - p) along
    e_ab, which lowers every Var(d_ij) by f (u_i - u_j)^2 / (1 + f s_ab^2), u = S e_ab
    (Sherman-Morrison). The next pairing maximises sum_ij Phi(-|d_ij| / s_ij) * (variance drop of
    d_ij) / s_ij^2: relative uncertainty removed where the order is in doubt (in bench/ranking.py
    this beat weighting by phi(d/s), by 1/s^4, the exact drop of Phi, and neighbour-of-rank picks).
    Within a batch each pick updates S as if played, so a batch spreads over different pairs.
    Multi-player groups grow greedily from the best pair.
    """

    def __init__(self, games: Sequence[GameSlot], policies: Sequence[str], budget: int, seed: int) -> None:
        self.games = list(games)
        self.policies = sorted(policies)
        self.budget = budget
        self.seed = seed
        self._index = {name: i for i, name in enumerate(self.policies)}
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
        n = len(self.policies)
        n_games, wins = self._standings(finished).overall.bt_matrices(self.policies)
        theta = bt_solve(n_games, wins)[0]
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        curvature = n_games[0] * p * (1.0 - p)
        q = 1.0 / (1.0 + np.exp(-theta))
        information = np.diag(curvature.sum(axis=1) + 2.0 * BT_PRIOR * q * (1.0 - q)) - curvature
        cov = np.linalg.inv(information)
        first_seat: Counter[tuple[str, str]] = Counter((r.game_id, r.players[0]) for r in finished)
        while len(self._sequence) < issued + count:
            self._sequence = _game_sequence(self.games, max(2 * len(self._sequence), issued + count, 64))
        out: list[Pairing] = []
        for index in range(issued, issued + count):
            slot = self._sequence[index]
            rng = np.random.default_rng(stable_seed(self.seed, "adaptive", index))
            group = self._best_group(theta, p, cov, slot.num_players, rng)
            for a, b in itertools.combinations(group, 2):  # as if the game were played
                u = cov[:, a] - cov[:, b]
                f = p[a, b] * (1.0 - p[a, b]) / (slot.num_players - 1)
                cov -= f * np.outer(u, u) / (1.0 + f * (u[a] - u[b]))
            names = [self.policies[i] for i in group]
            # Fair seats: whoever has sat first least in this game goes first; the rest rotate.
            lead = min(range(len(names)), key=lambda i: (first_seat[(slot.game_id, names[i])], rng.random()))
            seats = names[lead:] + names[:lead]
            first_seat[(slot.game_id, seats[0])] += 1
            out.append(_pairing("adaptive", slot, seats, self.seed, index))
        return out

    def _best_group(self, theta: np.ndarray, p: np.ndarray, cov: np.ndarray, size: int, rng: np.random.Generator) -> list[int]:
        n = len(theta)
        i, j = np.triu_indices(n, 1)
        var = np.maximum(cov[i, i] + cov[j, j] - 2.0 * cov[i, j], 1e-12)
        # Weight of pair (i, j): the chance its current order is wrong, per unit of its variance,
        # so a candidate scores by the relative variance it removes where the order is in doubt.
        ambiguity = norm.cdf(-np.abs(theta[i] - theta[j]) / np.sqrt(var)) / var
        # gain[c] for candidate pair c = (a, b): sum over pairs (i, j) of w_ij f (u_i - u_j)^2 / (1 + f s_ab^2)
        u = cov[:, i] - cov[:, j]  # (n, candidates): S e_ab for every candidate
        f = p[i, j] * (1.0 - p[i, j])
        spread = (u[i, :] - u[j, :]) ** 2  # (pairs, candidates)
        gain = (ambiguity @ spread) * f / (1.0 + f * var)
        gain = gain * (1.0 + 1e-9 * rng.random(len(gain)))  # deterministic tie-break
        best = int(np.argmax(gain))
        group = [int(i[best]), int(j[best])]
        # Larger games: add the policy whose comparisons with the group gain most (pairwise proxy).
        pair_gain = np.zeros((n, n))
        pair_gain[i, j] = pair_gain[j, i] = gain
        while len(group) < size:
            rest = [k for k in range(n) if k not in group]
            group.append(max(rest, key=lambda k: float(pair_gain[k, group].sum())))
        return group


def make_scheduler(
    kind: str,
    games: Sequence[GameSlot],
    policies: Sequence[str],
    *,
    matches_per_pair: int | None = None,
    budget: int | None = None,
    rounds: int | None = None,
    seed: int = 0,
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
    if kind == "round_robin":
        return RoundRobin(games, policies, matches_per_pair, budget, seed)
    if kind == "swiss":
        return Swiss(games, policies, rounds, budget, seed)
    if kind == "adaptive":
        if budget is None:
            raise ValueError("the adaptive scheduler needs a budget (number of matches)")
        return Adaptive(games, policies, budget, seed)
    raise ValueError(f"unknown scheduler {kind!r} (choose {', '.join(KINDS)})")
