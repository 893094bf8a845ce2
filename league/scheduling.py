"""Who plays whom next. Schedulers are deterministic given the league seed and the finished results,
so a resumed league hands out the same pairings (matched by key) as the run that was killed.

- round_robin: every group of `num_players` policies meets `matches_per_pair` times per game, with
  seats rotated so each policy sits in each seat equally often.
- swiss: rounds; each round pairs policies with similar scores, avoiding rematches when possible.
- adaptive: after a one-round warm-up, plays neighbours in the current Bradley-Terry ranking whose
  game is closest to a coin flip, favouring pairs that have met least (see Adaptive).
  Seats alternate between the two policies of a pair.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from league.results import GameResult

KINDS = ("round_robin", "swiss", "adaptive")


@dataclass(frozen=True)
class GameSlot:
    game_id: str
    weight: float = 1.0
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


class RoundRobin:
    def __init__(self, games: Sequence[GameSlot], policies: Sequence[str], matches_per_pair: int, seed: int) -> None:
        self.plan: list[Pairing] = []
        for slot in games:
            for group in itertools.combinations(sorted(policies), slot.num_players):
                for repeat in range(matches_per_pair):
                    shift = repeat % len(group)
                    seats = group[shift:] + group[:shift]
                    key = f"rr:{slot.game_id}:{'|'.join(group)}:{repeat}"
                    self.plan.append(Pairing(key, slot.game_id, tuple(seats), stable_seed(seed, key)))
        # Interleave games and groups so a partial league is already informative everywhere.
        order = np.random.default_rng(seed).permutation(len(self.plan))
        self.plan = [self.plan[i] for i in order]

    def next_pairings(self, finished: Sequence[GameResult], issued: int, limit: int) -> list[Pairing]:
        return self.plan[issued : issued + limit]

    def total(self) -> int | None:
        return len(self.plan)


class Swiss:
    """Rounds of disjoint pairings by current score (wins + half draws), two-player games only."""

    def __init__(self, games: Sequence[GameSlot], policies: Sequence[str], rounds: int, seed: int) -> None:
        if any(slot.num_players != 2 for slot in games):
            raise ValueError("swiss scheduling pairs two players; use round_robin for N-player games")
        self.games = list(games)
        self.policies = sorted(policies)
        self.rounds = rounds
        self.seed = seed
        self.per_round = len(self.policies) // 2

    def total(self) -> int | None:
        return self.rounds * self.per_round * len(self.games)

    def next_pairings(self, finished: Sequence[GameResult], issued: int, limit: int) -> list[Pairing]:
        per_round = self.per_round * len(self.games)
        if issued >= self.total() or len(finished) < issued or issued % per_round:
            return []  # the current round is still in flight, or the league is done
        round_no = issued // per_round
        score: Counter[str] = Counter()
        met: set[frozenset[str]] = set()
        for result in finished:
            met.add(frozenset(result.players))
            for name, rank in zip(result.players, result.ranks):
                score[name] += 1.0 if rank == 1 and list(result.ranks).count(1) == 1 else 0.5 if rank == 1 else 0.0
        rng = np.random.default_rng(stable_seed(self.seed, "swiss", round_no))
        order = sorted(self.policies, key=lambda p: (-score[p], rng.random()))
        pairs: list[tuple[str, str]] = []
        free = list(order)
        while len(free) >= 2:
            first = free.pop(0)
            partner = next((p for p in free if frozenset((first, p)) not in met), free[0])
            free.remove(partner)
            pairs.append((first, partner))
        out = []
        for slot in self.games:
            for a, b in pairs:
                seats = (a, b) if (round_no + self.policies.index(a)) % 2 == 0 else (b, a)
                key = f"swiss:{slot.game_id}:{round_no}:{a}|{b}"
                out.append(Pairing(key, slot.game_id, seats, stable_seed(self.seed, key)))
        return out[:limit]


class Adaptive:
    """Active ranking with a Bradley-Terry model of the results so far (two-player games):
    after a one-round warm-up, each pairing goes to the neighbours in the current ranking whose
    game is closest to a coin flip (p(1-p)), divided by sqrt(1 + times they met). A variant that
    scored every pair by (chance its order is wrong) x (posterior variance one game removes) did
    worse in bench/ranking.py (0.75 of round-robin's games against 0.50)."""

    def __init__(self, games: Sequence[GameSlot], policies: Sequence[str], budget: int, seed: int, warmup_rounds: int = 1) -> None:
        if any(slot.num_players != 2 for slot in games):
            raise ValueError("adaptive scheduling pairs two players; use round_robin for N-player games")
        self.games = list(games)
        self.policies = sorted(policies)
        self.budget = budget
        self.seed = seed
        self.warmup = warmup_rounds * (len(self.policies) // 2)

    def total(self) -> int | None:
        return self.budget

    def next_pairings(self, finished: Sequence[GameResult], issued: int, limit: int) -> list[Pairing]:
        from league.ratings import bt_log_strengths

        out: list[Pairing] = []
        count = min(limit, self.budget - issued)
        if count <= 0:
            return out
        n = len(self.policies)
        met: Counter[frozenset[str]] = Counter(frozenset(r.players) for r in finished)
        self._met = Counter(met)
        theta = bt_log_strengths(finished, self.policies)
        chosen: Counter[frozenset[str]] = Counter()
        for k in range(count):
            index = issued + k
            slot = self.games[index % len(self.games)]
            rng = np.random.default_rng(stable_seed(self.seed, "adaptive", index))
            if index < self.warmup:
                # Warm-up: a random perfect matching, so everyone has a first estimate.
                perm = rng.permutation(n)
                pos = (index % (n // 2)) * 2
                pair = (self.policies[perm[pos]], self.policies[perm[pos + 1]])
            else:
                pair = self._most_informative_pair(theta, chosen, rng)
            key_pair = frozenset(pair)
            chosen[key_pair] += 1
            met[key_pair] += 1
            seats = pair if met[key_pair] % 2 else (pair[1], pair[0])
            key = f"adaptive:{index}"
            out.append(Pairing(key, slot.game_id, seats, stable_seed(self.seed, key)))
        return out

    def _most_informative_pair(self, theta, chosen, rng) -> tuple[str, str]:
        """Neighbours in the current ranking whose game is closest to a coin flip, discounted by
        how often they have met (measured best in bench/ranking.py; see docs/benchmarks.md)."""
        order = list(np.argsort(-theta, kind="stable"))
        best, best_value = None, -1.0
        for rank in range(len(order) - 1):
            i, j = order[rank], order[rank + 1]
            p = 1.0 / (1.0 + math.exp(-(theta[i] - theta[j])))
            pair = frozenset((self.policies[i], self.policies[j]))
            value = p * (1 - p) / math.sqrt(1 + self._met[pair] + chosen[pair]) + 1e-9 * rng.random()
            if value > best_value:
                best, best_value = (self.policies[i], self.policies[j]), value
        assert best is not None
        return best


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
    if len(set(policies)) < 2:
        raise ValueError("a league needs at least two different policies")
    if kind == "round_robin":
        return RoundRobin(games, policies, matches_per_pair or 1, seed)
    if kind == "swiss":
        return Swiss(games, policies, rounds or max(1, math.ceil(math.log2(len(policies))) + 1), seed)
    if kind == "adaptive":
        if budget is None:
            raise ValueError("the adaptive scheduler needs a budget (number of matches)")
        return Adaptive(games, policies, budget, seed)
    raise ValueError(f"unknown scheduler {kind!r} (choose {', '.join(KINDS)})")
