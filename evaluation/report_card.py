"""The report card of one policy on one suite: what `arena eval suite` prints, writes as JSON and
markdown, and the web shows. A pure function of the stored matches of the evaluation league, so a
resumed or repeated evaluation with the same seeds gives the same card (latency aside).

Per game and overall: the candidate's score (its share of pairwise points against the references:
1 win, 0.5 draw, 0 loss) with a 95% Wilson interval, W/D/L against each reference, the invalid-move
rate (attempts the strict parser or the game rejected, over all its attempts), tokens, cost where
the provider reports it, and the median move latency. Overall, the anchored rating
(evaluation/anchored.py) on the suite's fixed scale.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable

from arena.match import MatchRecord
from arena.redaction import redact
from evaluation.anchored import anchored_rating
from evaluation.suites import Suite
from league.results import GameResult, pairwise, standings

CARD_SCHEMA = 2  # 2 added `engine`
Z95 = 1.959963984540054


def wilson(score: float, n: float) -> tuple[float, float]:
    """Wilson's 95% score interval for a proportion (draws count half; exact at 0 and n)."""
    if n <= 0:
        return (0.0, 1.0)
    p = score / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class Tally:
    """Pairwise results against the references, and the candidate's own turns."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    attempts: int = 0
    invalid: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    latencies: list[float] = field(default_factory=list)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add_turns(self, record: MatchRecord, candidate: str) -> None:
        for turn in record.turns:
            if turn.policy != candidate:
                continue
            self.attempts += 1
            self.invalid += 0 if _clean(turn) else 1
            self.prompt_tokens += turn.prompt_tokens or 0
            self.completion_tokens += turn.completion_tokens or 0
            if turn.cost_usd is not None:
                self.cost_usd = (self.cost_usd or 0.0) + turn.cost_usd
            self.latencies.append(turn.latency_s)

    def absorb(self, other: "Tally") -> None:
        for name in ("wins", "draws", "losses", "attempts", "invalid", "prompt_tokens", "completion_tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd
        self.latencies.extend(other.latencies)

    def summary(self) -> dict[str, Any]:
        score = self.wins + 0.5 * self.draws
        lo, hi = wilson(score, self.games)
        return {
            "games": self.games, "wins": self.wins, "draws": self.draws, "losses": self.losses,
            "score": round(score / self.games, 6) if self.games else None, "score_lo": round(lo, 6), "score_hi": round(hi, 6),
        }

    def turn_summary(self) -> dict[str, Any]:
        return {
            "attempts": self.attempts, "invalid": self.invalid,
            "invalid_rate": round(self.invalid / self.attempts, 6) if self.attempts else None,
            "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "median_latency_s": round(statistics.median(self.latencies), 4) if self.latencies else None,
        }


def _clean(turn: Any) -> bool:
    """A valid move that answered in the asked format (a lenient 'mention' parse is not clean)."""
    return bool(getattr(turn, "clean", turn.valid))


def _order(record: MatchRecord) -> tuple[str, int, tuple[str, ...]]:
    """A fixed order (not finishing order) so the bootstrap resamples the same matches every run."""
    return (record.game_id, record.seed, tuple(record.policies))


def report_card(suite: Suite, candidate: str, spec: str, records: Iterable[MatchRecord], *, quick: bool, planned: int, aborted: int = 0) -> dict[str, Any]:
    """The card as a plain JSON-able dict (schema: docs/eval.md)."""
    reference_of = {suite.store_name(r.name): r.name for r in suite.references}
    finished = sorted((r for r in records if r.outcome is not None), key=_order)
    per_game: dict[str, dict[str, Tally]] = {}
    game_turns: dict[str, Tally] = {}
    results: list[GameResult] = []
    for record in finished:
        result = GameResult(str(len(results)), record.game_id, tuple(record.policies), tuple(int(r) for r in record.outcome["ranks"]))
        results.append(result)
        tallies = per_game.setdefault(record.game_id, {})
        game_turns.setdefault(record.game_id, Tally()).add_turns(record, candidate)
        for a, b, score in pairwise(result):
            if candidate not in (a, b) or len(standings(result)) < 2:
                continue
            other, mine = (b, score) if a == candidate else (a, 1.0 - score)
            tally = tallies.setdefault(reference_of.get(other, other), Tally())
            if mine == 1.0:
                tally.wins += 1
            elif mine == 0.5:
                tally.draws += 1
            else:
                tally.losses += 1
    engines = sorted({str(t.meta["engine"]) for r in finished for t in r.turns if t.policy == candidate and t.meta.get("engine")})
    games_out: list[dict[str, Any]] = []
    overall_vs: dict[str, Tally] = {}
    overall_turns = Tally()
    for game in suite.games_for(quick):
        tallies = per_game.get(game.id, {})
        total = Tally()
        for name, tally in tallies.items():
            total.absorb(tally)
            overall_vs.setdefault(name, Tally()).absorb(tally)
        turns = game_turns.get(game.id, Tally())
        overall_turns.absorb(turns)
        games_out.append({
            "game": game.id, **total.summary(), **turns.turn_summary(),
            "vs": {name: tallies[name].summary() for name in sorted(tallies)},
        })
    overall = Tally()
    for tally in overall_vs.values():
        overall.absorb(tally)
    anchors = {suite.store_name(name): value for name, value in suite.anchors().items()}
    rating = None
    if anchors and results:
        fit = anchored_rating(results, candidate, anchors, seed=0)
        rating = {"rating": round(fit.rating, 2), "lo": round(fit.lo, 2), "hi": round(fit.hi, 2), "comparisons": fit.comparisons}
    return {
        "schema": CARD_SCHEMA,
        "suite": suite.name, "quick": quick, "policy": candidate, "spec": redact(spec),  # the card is exported and shown
        "engine": card_engine(engines),
        "matches": {"planned": planned, "finished": len(finished), "aborted": aborted},
        "complete": len(finished) + aborted >= planned,
        "overall": {**overall.summary(), **overall_turns.turn_summary(), "vs": {n: overall_vs[n].summary() for n in sorted(overall_vs)}},
        "games": games_out,
        "rating": rating,
        "anchors": suite.anchors(),
    }


def card_engine(labels: list[str]) -> str | None:
    """The engine the candidate's moves came from, as its turns recorded it (LocalPolicy's
    engine_label: "hf", "vllm", "vllm+hf"); None for a policy with no local engine (scripted,
    remote); "mixed: A, B" when turns disagree (a card of two engines compares with nothing)."""
    if not labels:
        return None
    return labels[0] if len(labels) == 1 else "mixed: " + ", ".join(labels)


def without_timing(card: dict[str, Any]) -> dict[str, Any]:
    """The card minus what differs between identical runs (latency), for comparing two runs."""
    strip = lambda d: {k: v for k, v in d.items() if k != "median_latency_s"}  # noqa: E731
    return {**card, "overall": strip(card["overall"]), "games": [strip(g) for g in card["games"]]}

