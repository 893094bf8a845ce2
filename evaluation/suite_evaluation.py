"""Evaluate one policy on a frozen suite: play the suite's league (resuming whatever an earlier,
killed run left unfinished), then read the report card back from the store.

The league is named after the suite and the policy (`eval core-v1: NAME`), so running the same
command again resumes or, once complete, only re-reads the card.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any, Callable

from arena.policy import PolicySpec
from evaluation.report_card import report_card
from evaluation.suites import Suite, SuiteError, evaluation_league, load_suite
from league.config import LeagueConfig
from league.runner import MatchDone, run_league
from league.store import Store

# The engine of local candidates whose spec names none: the engine of the suites' LLM references
# (core-v1's smollm2 is `engine=hf`), which every install has. At temperature 0 both engines play
# the same moves (tests/llm/test_engine_agreement.py); sampled policies draw from each engine's own
# generator, so a card is made on one engine and says which (`engine`), and `arena eval compare`
# refuses cards of different engines.
SUITE_ENGINE = "hf"

# evaluation_league names its league so: `eval core-v1: NAME` or `eval core-v1 quick: NAME`
EVAL_LEAGUE = re.compile(r"^eval (?P<suite>\S+?)(?P<quick> quick)?: (?P<policy>.+)$", re.S)


@dataclass(frozen=True)
class StoredEvaluation:
    league: str
    suite: str
    quick: bool
    policy: str
    spec: str


def evaluation_config(suite: Suite, spec: str, name: str, quick: bool, concurrency: int | None = None) -> LeagueConfig:
    config = evaluation_league(suite, spec, name, quick=quick)
    return config.model_copy(update={"concurrency": concurrency}) if concurrency else config


def card_from_store(store: Store, suite: Suite, config: LeagueConfig, name: str, spec: str, quick: bool) -> dict[str, Any]:
    league_id = store.league_id(config.name)
    records = list(store.iter_records(league_id)) if league_id is not None else []
    aborted = sum(1 for r in records if r.outcome is None)
    return report_card(suite, name, spec, records, quick=quick, planned=len(config.matches), aborted=aborted)


def run_evaluation(
    store: Store,
    suite: Suite,
    spec: str,
    name: str,
    *,
    quick: bool = False,
    concurrency: int | None = None,
    on_finish: Callable[[MatchDone], None] | None = None,
    on_start: Callable[[int, int | None, int], None] | None = None,
    handle_signals: bool = False,
) -> tuple[dict[str, Any], Any]:
    """(card, league summary). Interrupted runs return a card marked incomplete."""
    config = evaluation_config(suite, spec, name, quick, concurrency)
    defaults = engine_defaults(store, config, name, spec)
    summary = asyncio.run(run_league(config, store, on_finish=on_finish, on_start=on_start, handle_signals=handle_signals,
                                     policy_defaults=defaults))
    return card_from_store(store, suite, config, name, spec, quick), summary


def engine_defaults(store: Store, config: LeagueConfig, name: str, spec: str) -> dict[str, tuple[str, str]]:
    """The engine a local candidate without `engine=` plays on: the one an earlier, interrupted run
    of this evaluation started on (a card is made on one engine), else `SUITE_ENGINE`. A spec that
    names another engine than the stored turns' is refused in one line."""
    started = stored_engines(store, config.name, name)
    if not started:
        return {"engine": (SUITE_ENGINE, f"evaluation suites play local candidates on the engine of their references ({SUITE_ENGINE}); "
                                         "cards made on one engine compare")}
    kind = started[0].partition("+")[0]
    named = (PolicySpec.parse(spec).params.get("engine") or "").strip().lower()
    if named and named != "auto" and named != kind:
        raise SuiteError(f"{config.name!r} started on the {kind} engine and a card is made on one engine: resume it with engine={kind}, "
                         "or evaluate under another --name")
    return {"engine": (kind, f"this evaluation started on the {kind} engine")}


def stored_engines(store: Store, league: str, candidate: str) -> list[str]:
    """The engine labels the candidate's stored turns in `league` carry (sorted, distinct)."""
    league_id = store.league_id(league)
    if league_id is None:
        return []
    labels = {str(t.meta["engine"]) for r in store.iter_records(league_id) for t in r.turns if t.policy == candidate and t.meta.get("engine")}
    return sorted(labels)


def stored_evaluations(store: Store) -> list[StoredEvaluation]:
    """Every evaluation league in the store whose suite this version ships, by name."""
    found: list[StoredEvaluation] = []
    for row in store.leagues():
        match = EVAL_LEAGUE.match(row.name)
        if not match:
            continue
        policy = match["policy"]
        spec = next((p.get("spec", "") for p in (row.config or {}).get("policies", []) if p.get("name") == policy), None)
        if spec is None:
            continue
        found.append(StoredEvaluation(row.name, match["suite"], bool(match["quick"]), policy, spec))
    return sorted(found, key=lambda e: (e.policy, e.suite, e.quick))


def stored_card(store: Store, evaluation: StoredEvaluation) -> dict[str, Any] | None:
    """The card of a stored evaluation; None when its suite is not one this version ships."""
    try:
        suite = load_suite(evaluation.suite)
    except SuiteError:
        return None
    config = evaluation_config(suite, evaluation.spec, evaluation.policy, evaluation.quick)
    return card_from_store(store, suite, config, evaluation.policy, evaluation.spec, evaluation.quick)
