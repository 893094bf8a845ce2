"""The report of an ablation: a pure function of the plan and the stored matches of its league, so a
resumed or re-read ablation gives the same report (latency aside). Formulas: evaluation/paired_tests.py
and docs/ablate.md.

For each comparison (a variant, or the null variant, against the baseline; with `all_pairs` two
variants against each other) the pairs are the two stored matches of one chance seed with the
seats swapped. A pair counts once both matches finished with a result; a pair with an aborted
match is left out and counted. Verdicts: a variant's difference is supported where its
Holm-adjusted p-value (across every comparison but the null's) is below alpha; the null variant
is judged on its own unadjusted p-value, the stricter check, and should not be significant.
Beside the comparisons, each policy's move figures (the leaderboard's, league/move_stats.py) say
what its harness costs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from arena.match import MatchRecord
from arena.redaction import redact
from evaluation.ablation_plan import AblationPlan
from evaluation.paired_tests import holm, summarize
from evaluation.report_card import Tally, card_engine
from league.move_stats import DEFINITIONS, MOVE_DEFINITION, UNKNOWN, MoveStats, seconds_text, usd_text
from league.results import GameResult, pairwise

REPORT_SCHEMA = 1
ALPHA = 0.05


@dataclass
class PairTally:
    """The pairs of one comparison in one game (or all games)."""

    differences: list[float] = field(default_factory=list)
    aborted: int = 0  # pairs with a match that ended without a result
    results: Tally = field(default_factory=Tally)  # the policy's W/D/L over the pairs' games

    def add(self, scores: tuple[float, float]) -> None:
        self.differences.append(scores[0] + scores[1] - 1.0)  # (s - (1 - s)) per game, averaged over two games
        for score in scores:
            if score == 1.0:
                self.results.wins += 1
            elif score == 0.5:
                self.results.draws += 1
            else:
                self.results.losses += 1


def points(record: MatchRecord, policy: str) -> float:
    """`policy`'s points against the other seat of a finished two-player match."""
    for a, b, score in pairwise(GameResult.from_record(record)):
        if policy in (a, b):
            return score if a == policy else 1.0 - score
    raise ValueError(f"match {record.match_id}: {policy!r} has no opponent in it")


def collect_pairs(plan: AblationPlan, records: Iterable[MatchRecord]) -> dict[tuple[str, str], dict[str, PairTally]]:
    """(policy, against) -> game -> its pairs, looked up by the plan (game, chance seed, seats)."""
    stored = {(r.game_id, r.seed, tuple(r.policies)): r for r in records}
    out: dict[tuple[str, str], dict[str, PairTally]] = {}
    for policy, against, _ in plan.comparisons():
        per_game = out.setdefault((policy, against), {})
        for game in plan.games:
            tally = per_game.setdefault(game.id, PairTally())
            for pair in range(plan.pairs):
                seed = plan.chance_seed(game.id, pair)
                both = [stored.get((game.id, seed, seats)) for seats in ((policy, against), (against, policy))]
                if any(r is None for r in both):
                    continue  # not played yet
                if any(r.outcome is None for r in both):
                    tally.aborted += 1
                    continue
                tally.add((points(both[0], policy), points(both[1], policy)))
    return out


def significant_digits(p: float) -> float:
    """A p-value to 6 significant digits (6 decimals would turn a small one into 0)."""
    return float(f"{p:.6g}")


def _summary(tally: PairTally) -> dict[str, Any]:
    stats = summarize(tally.differences)
    rounded = lambda x: None if x is None else round(x, 6)  # noqa: E731
    results = tally.results.summary()
    return {
        "pairs": stats.n, "pairs_aborted": tally.aborted, **{k: results[k] for k in ("games", "wins", "draws", "losses", "score")},
        "diff": rounded(stats.mean), "ci95": None if stats.ci_lo is None else [rounded(stats.ci_lo), rounded(stats.ci_hi)],
        "sd": rounded(stats.sd), "p_value": significant_digits(stats.p_value) if stats.n else None, "decisive_pairs": stats.decisive,
        "smallest_possible_p": rounded(stats.smallest_p),
    }


def rate_text(value: float | None) -> str:
    return UNKNOWN if value is None else f"{100 * value:.1f}%"


def count_text(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:,.0f}"


# The leaderboard's per-move figures (league/move_stats.py holds each one's definition) that say
# what a harness costs: (key in MoveStats.columns(), header, how a cell reads).
MOVE_COLUMNS: tuple[tuple[str, str, Callable[[float | None], str]], ...] = (
    ("invalid_rate", "invalid", rate_text), ("forfeit_rate", "forfeit", rate_text),
    ("prompt_tokens_per_move", "prompt", count_text), ("completion_tokens_per_move", "generated", count_text),
    ("reasoning_tokens_per_move", "reasoning", count_text), ("cost_per_move_usd", "$/move", usd_text),
    ("median_move_s", "median s", seconds_text),
)


METHOD = {
    "pair": "one chance seed played twice with the seats swapped; both matches finished with a result",
    "difference": "the policy's points minus its opponent's per game, averaged over the pair's two games (win 1, draw 1/2, loss 0): -1..1",
    "interval": "Student t 95% interval of the mean pair difference",
    "test": "two-sided paired sign-flip permutation test on the sum of pair differences, exact (all 2^n sign flips, no sampling)",
    "correction": "Holm step-down across the comparisons other than the null variant's; the null is judged on its unadjusted p-value",
    "moves": "each policy's figures over all its final matches in the ablation, as on the leaderboard; " + MOVE_DEFINITION,
    **{key: DEFINITIONS[key] for key, _, _ in MOVE_COLUMNS},
}


def _policy_rows(plan: AblationPlan, finished: list[MatchRecord], moves: Mapping[str, MoveStats]) -> list[dict[str, Any]]:
    """Each policy's move figures over all its final matches in the ablation: what its harness costs."""
    rows = []
    for policy, role in plan.entries():
        engines = sorted({str(t.meta["engine"]) for r in finished for t in r.turns if t.policy == policy.name and t.meta.get("engine")})
        figures = (moves.get(policy.name) or MoveStats(policy.name)).columns()
        rows.append({"name": policy.name, "spec": redact(policy.spec), "role": role, "engine": card_engine(engines), **figures})
    return rows


def ablation_report(
    plan: AblationPlan, records: Iterable[MatchRecord], *, planned_matches: int, moves: Mapping[str, MoveStats] | None = None, alpha: float = ALPHA,
) -> dict[str, Any]:
    """The report as a plain JSON-able dict (schema: docs/ablate.md). `moves`: each policy's move
    figures over the ablation's league (league.move_stats, all games)."""
    records = list(records)
    finished = [r for r in records if r.outcome is not None]
    pairs = collect_pairs(plan, records)
    comparisons: list[dict[str, Any]] = []
    for policy, against, role in plan.comparisons():
        per_game = pairs[(policy, against)]
        overall = PairTally()
        for tally in per_game.values():
            overall.differences += tally.differences
            overall.aborted += tally.aborted
            overall.results.absorb(tally.results)
        comparisons.append({
            "policy": policy, "against": against, "role": role, "pairs_planned": plan.pairs * len(plan.games), **_summary(overall),
            "per_game": {game: _summary(tally) for game, tally in per_game.items()} if len(per_game) > 1 else {},
        })
    judged = [c for c in comparisons if c["role"] != "null" and c["pairs"]]
    for comparison, adjusted in zip(judged, holm([c["p_value"] for c in judged])):
        comparison["p_holm"] = significant_digits(adjusted)
    for comparison in comparisons:
        comparison.setdefault("p_holm", None)
        decisive_p = comparison["p_value"] if comparison["role"] == "null" else comparison["p_holm"]
        comparison["significant"] = bool(comparison["pairs"]) and decisive_p is not None and decisive_p < alpha
        comparison["verdict"] = verdict(comparison, alpha)
    complete_pairs = sum(c["pairs"] + c["pairs_aborted"] for c in comparisons)
    planned_pairs = sum(c["pairs_planned"] for c in comparisons)
    return {
        "schema": REPORT_SCHEMA,
        "ablation": plan.name, "league": plan.league_name, "baseline": plan.baseline.name,
        "games": [g.id for g in plan.games], "pairs_per_game": plan.pairs, "seed": plan.seed, "alpha": alpha,
        "matches": {"planned": planned_matches, "finished": len(finished), "aborted": len(records) - len(finished)},
        "complete": complete_pairs >= planned_pairs,
        "method": METHOD,
        "policies": _policy_rows(plan, finished, moves or {}),
        "comparisons": comparisons,
    }


EVEN = "every pair came out even (the same seat won both games, or both were drawn)"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def title(report: dict[str, Any]) -> str:
    """`ablation NAME: against BASELINE on GAMES` (the name left out where it is the baseline's)."""
    name = "" if report["ablation"] == report["baseline"] else f" {report['ablation']}:"
    return f"ablation{name} against {report['baseline']} on {', '.join(report['games'])}"


def signed(x: float | None) -> str:
    return "-" if x is None else f"{round(x, 2) + 0.0:+.2f}"  # + 0.0: a -0.00 is shown as +0.00


def p_text(value: float | None) -> str:
    return "-" if value is None else "<0.001" if value < 0.001 else f"{value:.3f}"


def interval_text(comparison: dict[str, Any]) -> str:
    ci = comparison["ci95"]
    return "no interval from one pair" if ci is None else f"95% CI {signed(ci[0])}..{signed(ci[1])}"


def verdict(c: dict[str, Any], alpha: float) -> str:
    """One sentence on what the data say about one comparison."""
    who = f"{c['policy']} vs {c['against']}"
    if not c["pairs"]:
        return f"{who}: no complete pair yet."
    effect = f"{signed(c['diff'])} points per game ({interval_text(c)}) over {plural(c['pairs'], 'pair')}"
    if c["role"] == "null":
        if c["decisive_pairs"] == 0:
            return f"{who}: {EVEN}: whose draws were played changed no result, so the null shows no sampling noise here."
        if c["significant"]:
            return (f"warning: {who}: {effect}, p = {c['p_value']:.3g}: the null variant, a copy of the baseline with draws of its own, "
                    f"differs from it at alpha {alpha:g}; something besides the policy moves the results (a seat effect the swap "
                    "does not cancel, a provider that changed during the run) or this is the 1-in-20 chance; read every verdict with care.")
        noise = "" if c["ci95"] is None else f"; differences within about ±{(c['ci95'][1] - c['ci95'][0]) / 2:.2f} are sampling noise at this many pairs"
        return f"{who}: {effect}, p = {c['p_value']:.3g}: no significant difference, as a copy should show{noise}."
    adjusted = f"p = {c['p_value']:.3g}, Holm-adjusted {c['p_holm']:.3g}"
    if c["significant"]:
        direction = "scores higher than" if c["diff"] > 0 else "scores lower than"
        return f"{c['policy']} {direction} {c['against']}: {effect}, {adjusted}: the data support a difference at alpha {alpha:g}."
    short = ""
    if c["decisive_pairs"] == 0:
        short = f"; {EVEN}"
    elif c["smallest_possible_p"] >= alpha:
        short = f"; {plural(c['decisive_pairs'], 'decisive pair')} cannot give p below {c['smallest_possible_p']:.3g}: play more pairs"
    return f"{who}: {effect}, {adjusted}: the data do not support a difference at alpha {alpha:g} (which is not evidence that there is none){short}."
