"""Training runs as the web shows them: the checkpoints of a run and how they rate over steps.

`arena train` registers every checkpoint as a league policy `RUN/step-K` (meta: run, step, base)
and evaluates it in a league of its own, `RUN/eval/step-K`, against fixed opponents (by default
the base model and the scripted bot). One league per checkpoint cannot show a run climbing, so a
run's page pools the matches of all its evaluation leagues and fits one Bradley-Terry model over
them: the fixed opponents appear in every evaluation and tie the checkpoints to one scale.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from arena.redaction import redact
from league.ratings import leaderboard
from league.results import GameResult, pairwise
from league.store import Store
from web.queries import Pair

EVAL_LEAGUE = re.compile(r"^(?P<run>.+)/eval/step-(?P<step>\d+)$")


@dataclass
class Checkpoint:
    step: int
    policy: str
    spec: str
    league: str | None  # its evaluation league, when it was evaluated
    rating: float | None = None  # pooled Bradley-Terry (Elo scale) over the run's evaluations
    lo: float | None = None
    hi: float | None = None
    rank: int | None = None
    record: Pair = field(default_factory=Pair)  # against every opponent, all evaluations
    versus: dict[str, Pair] = field(default_factory=dict)  # opponent -> record


@dataclass
class Opponent:
    policy: str
    rating: float
    lo: float
    hi: float
    rank: int


@dataclass
class RunSummary:
    name: str
    base: str
    checkpoints: int
    evaluated: int
    last_step: int


@dataclass
class RunDetail:
    name: str
    base: str
    checkpoints: list[Checkpoint]
    opponents: list[Opponent]  # the fixed evaluation opponents on the same scale
    matches: int  # rated evaluation matches pooled


def _run_policies(store: Store) -> dict[str, list[Any]]:
    """run name -> its registered checkpoint policies, by step."""
    runs: dict[str, list[Any]] = {}
    for row in store.policies():
        meta = row.meta or {}
        if isinstance(meta.get("run"), str) and isinstance(meta.get("step"), int):
            runs.setdefault(meta["run"], []).append(row)
    for rows in runs.values():
        rows.sort(key=lambda r: r.meta["step"])
    return runs


def _eval_leagues(store: Store) -> dict[str, dict[int, tuple[int, str]]]:
    """run name -> step -> (league id, league name) of its evaluation leagues."""
    found: dict[str, dict[int, tuple[int, str]]] = {}
    for league in store.leagues():
        match = EVAL_LEAGUE.match(league.name)
        if match:
            found.setdefault(match["run"], {})[int(match["step"])] = (league.id, league.name)
    return found


def list_runs(store: Store) -> list[RunSummary]:
    policies, leagues = _run_policies(store), _eval_leagues(store)
    out = []
    for name in sorted(set(policies) | set(leagues)):
        rows = policies.get(name, [])
        steps = [r.meta["step"] for r in rows] + list(leagues.get(name, {}))
        base = rows[-1].meta.get("base", "") if rows else ""
        out.append(RunSummary(name, str(base), len(rows), len(leagues.get(name, {})), max(steps, default=0)))
    return out


def run_version(store: Store, name: str) -> tuple[Any, ...]:
    """Changes whenever the run's checkpoints or evaluation matches do (cheap: index seeks)."""
    from web import queries as q

    leagues = _eval_leagues(store).get(name, {})
    with store.session() as s:
        versions = tuple((lid, q.data_version(s, lid)) for lid, _ in sorted(leagues.values()))
    checkpoints = tuple((r.name, r.spec) for r in _run_policies(store).get(name, []))
    return versions, checkpoints


def run_detail(store: Store, name: str, bootstrap: int = 200) -> RunDetail | None:
    """The run's checkpoints with pooled ratings; None when no such run exists."""
    rows = _run_policies(store).get(name, [])
    leagues = _eval_leagues(store).get(name, {})
    if not rows and not leagues:
        return None
    results: list[GameResult] = []
    for league_id, _ in leagues.values():
        results.extend(store.results(league_id))

    checkpoint_names = {f"{name}/step-{step}" for step in leagues} | {r.name for r in rows}
    checkpoints: dict[str, Checkpoint] = {}
    for row in rows:
        step = row.meta["step"]
        checkpoints[row.name] = Checkpoint(step, row.name, redact(row.spec), leagues.get(step, (None, None))[1])
    for step, (_, league_name) in leagues.items():  # evaluated, but its registration is gone
        checkpoints.setdefault(f"{name}/step-{step}", Checkpoint(step, f"{name}/step-{step}", "", league_name))

    for result in results:
        for a, b, score in pairwise(result):
            for me, other, mine in ((a, b, score), (b, a, 1.0 - score)):
                if me in checkpoints and other not in checkpoint_names:
                    _tally(checkpoints[me].versus.setdefault(other, Pair()), mine)
                    _tally(checkpoints[me].record, mine)

    opponents: list[Opponent] = []
    for row in leaderboard(results, by="bt", bootstrap=bootstrap) if results else []:
        if row.policy in checkpoints:
            checkpoint = checkpoints[row.policy]
            checkpoint.rating, checkpoint.lo, checkpoint.hi, checkpoint.rank = row.rating, row.lo, row.hi, row.rank
        elif row.policy not in checkpoint_names:
            opponents.append(Opponent(row.policy, row.rating, row.lo, row.hi, row.rank))
    base = str(rows[-1].meta.get("base", "")) if rows else ""
    ordered = sorted(checkpoints.values(), key=lambda c: c.step)
    return RunDetail(name, base, ordered, opponents, sum(1 for r in results if len(set(r.players)) >= 2))


def _tally(pair: Pair, score: float) -> None:
    if score == 1.0:
        pair.wins += 1
    elif score == 0.0:
        pair.losses += 1
    else:
        pair.draws += 1
