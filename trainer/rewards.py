"""Rewards, computed after collection from the stored MatchRecords.

A reward belongs to one seat of one finished match (an "episode"): every turn that seat's policy
played in the match is trained with that episode's advantage. Each term is a pure function of
(record, seat); terms are combined by a weighted sum, or by Pareto rank within the batch when the
objectives should not be traded against each other at fixed rates.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from arena.match import LENIENT_PARSES, MatchRecord, TurnRecord
from trainer.branching import is_replayed
from trainer.config import RewardSettings, RewardTerm, resolve_function

RewardFunction = Callable[[MatchRecord, int], float]


class RewardError(ValueError):
    """A reward function failed or returned something that is not a finite number."""


@dataclass
class Episode:
    """One trained seat of one match, with its reward once computed."""

    record: MatchRecord
    seat: int
    group: str  # advantage group: game, seed, seat and opponent; see trainer.rollouts
    components: dict[str, float] = field(default_factory=dict)
    reward: float = 0.0

    @property
    def game_id(self) -> str:
        return self.record.game_id

    @property
    def role_key(self) -> tuple[str, int]:
        return (self.record.game_id, self.seat)

    def turns(self) -> list[TurnRecord]:
        return seat_turns(self.record, self.seat)


def seat_turns(record: MatchRecord, seat: int) -> list[TurnRecord]:
    """The seat's own turns: what it played, not the moves a branched game replayed to reach its
    start (trainer.branching), which were scored and trained in the game that played them."""
    return [t for t in record.turns if t.player == seat and not is_replayed(t)]


# ---- the terms ---------------------------------------------------------------------------------


def outcome_reward(record: MatchRecord, seat: int, mode: str = "wdl") -> float:
    """wdl: +1 for the sole best rank, 0 for a draw (all tied, or a shared first place), -1 otherwise. rank: 1 - 2 (rank-1)/(n-1), so first = +1 and last = -1 for n players.
    score: the seat's own score as the game reports it. An aborted match (no outcome) scores 0."""
    if not record.outcome:
        return 0.0
    if mode == "score":
        return float(record.outcome["scores"][seat])
    ranks = list(record.outcome["ranks"])
    n = len(ranks)
    if mode == "rank":
        return 1.0 - 2.0 * (ranks[seat] - 1) / (n - 1) if n > 1 else 0.0
    if len(set(ranks)) == 1:
        return 0.0
    best = min(ranks)
    if ranks[seat] == best:
        return 1.0 if ranks.count(best) == 1 else 0.0  # a shared first place counts as a draw
    return -1.0


def invalid_penalty(record: MatchRecord, seat: int) -> float:
    """Minus the share of this seat's attempts that were not clean valid moves (rejected by the
    game, or only found by the lenient "mention" parse); 0 when it made none."""
    turns = seat_turns(record, seat)
    return -sum(not t.clean for t in turns) / len(turns) if turns else 0.0


def is_format_failure(turn: TurnRecord) -> bool:
    """The reply did not state a move as asked (as opposed to a well-formed but illegal move): a
    move only found mentioned in prose (lenient parse) is a format failure too."""
    method = turn.meta.get("parse")  # set by arena.llm.llm_policy: bracket, mention, unmatched, ...
    if isinstance(method, str):
        return method in ("unmatched", "unformatted", "empty", *LENIENT_PARSES)
    return turn.error is not None or not (turn.action or "").strip()


def format_penalty(record: MatchRecord, seat: int) -> float:
    turns = seat_turns(record, seat)
    return -sum(is_format_failure(t) for t in turns) / len(turns) if turns else 0.0


def length_penalty(record: MatchRecord, seat: int, target_tokens: int) -> float:
    """Minus how far the mean reply length exceeds `target_tokens`, in units of the target."""
    lengths = [t.completion_tokens or 0 for t in seat_turns(record, seat)]
    if not lengths:
        return 0.0
    mean = sum(lengths) / len(lengths)
    return -max(0.0, mean - target_tokens) / target_tokens


def term_function(term: RewardTerm) -> RewardFunction:
    if term.kind == "outcome":
        return lambda record, seat: outcome_reward(record, seat, term.mode)
    if term.kind == "invalid":
        return invalid_penalty
    if term.kind == "format":
        return format_penalty
    if term.kind == "length":
        return lambda record, seat: length_penalty(record, seat, term.target_tokens)
    return resolve_function(term.function)


def term_names(terms: Sequence[RewardTerm]) -> list[str]:
    """Metric names: the kind (the function for custom terms), numbered when a kind repeats."""
    names = [f"custom:{t.function}" if t.kind == "custom" else t.kind for t in terms]
    return [name if names.count(name) == 1 else f"{name}#{i}" for i, name in enumerate(names)]


# ---- combining -----------------------------------------------------------------------------------


def pareto_fronts(points: Sequence[Sequence[float]]) -> list[int]:
    """Non-dominated sorting (NSGA-II, Deb et al. 2002): front index per point, 0 = best.
    Every objective is maximised; a point dominates another when it is >= everywhere and > once."""
    n = len(points)
    dominated_by = [0] * n
    dominates: list[list[int]] = [[] for _ in range(n)]
    for i in range(n):
        for j in range(n):
            if i != j and _dominates(points[i], points[j]):
                dominates[i].append(j)
                dominated_by[j] += 1
    front = [0] * n
    current = [i for i in range(n) if dominated_by[i] == 0]
    level = 0
    while current:
        nxt = []
        for i in current:
            front[i] = level
            for j in dominates[i]:
                dominated_by[j] -= 1
                if dominated_by[j] == 0:
                    nxt.append(j)
        current, level = nxt, level + 1
    return front


def _dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    return all(x >= y for x, y in zip(a, b)) and any(x > y for x, y in zip(a, b))


class RewardModel:
    """The configured terms, applied to a batch of episodes."""

    def __init__(self, settings: RewardSettings):
        self.settings = settings
        names = term_names(settings.terms)
        self.terms = [(name, t.weight, term_function(t)) for name, t in zip(names, settings.terms)]

    def score(self, episodes: Sequence[Episode]) -> None:
        """Fill each episode's `components` and `reward` in place."""
        for episode in episodes:
            for name, _, function in self.terms:
                try:
                    value = float(function(episode.record, episode.seat))
                except Exception as exc:  # noqa: BLE001 - a user's function: name it in one line
                    raise RewardError(f"reward {name} failed on match {episode.record.match_id}: {type(exc).__name__}: {exc}") from None
                if not math.isfinite(value):
                    raise RewardError(f"reward {name} returned {value!r} for match {episode.record.match_id}")
                episode.components[name] = value
        if self.settings.combine == "sum":
            for episode in episodes:
                episode.reward = sum(w * episode.components[name] for name, w, _ in self.terms)
            return
        # Pareto: the sign of each weight says whether to maximise (+) or minimise (-) the term;
        # an episode's reward is 1 on the best front falling linearly to 0 on the worst.
        points = [[math.copysign(1.0, w) * e.components[name] for name, w, _ in self.terms if w != 0] for e in episodes]
        fronts = pareto_fronts(points)
        worst = max(fronts, default=0)
        for episode, front in zip(episodes, fronts):
            episode.reward = 1.0 - front / worst if worst else 0.0
