"""Fit a suite's anchors once, at its release: play the references among themselves on every game
and seed of the full suite (league/suites.anchor_league), fit the pooled Bradley-Terry ratings and
print them as the YAML to paste into the suite file. Run it only for a suite not yet released.

    .venv/bin/python scripts/fit_suite_anchors.py core-v1 --db sqlite:///anchors-core-v1.db
"""

from __future__ import annotations

import argparse
import asyncio
import json

from league.anchored import fit_anchors
from league.runner import run_league
from league.store import Store
from league.suites import anchor_league, load_suite


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite")
    parser.add_argument("--db", required=True, help="store for the reference tournament (kept: it is the evidence)")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    config = anchor_league(suite)
    store = Store(args.db)
    summary = asyncio.run(run_league(config, store, handle_signals=True))
    if summary.interrupted:
        raise SystemExit("interrupted: run the same command again to finish the tournament")
    results = store.results(store.league_id(config.name))
    anchors = fit_anchors(results)
    by_reference = {r.name: anchors[suite.store_name(r.name)] for r in suite.references}
    print(f"# {len(results)} reference matches")
    for name, rating in by_reference.items():
        print(f"{name}: anchor: {rating}")
    print(json.dumps({"anchor_matches": len(results), "anchors": by_reference}))


if __name__ == "__main__":
    main()
