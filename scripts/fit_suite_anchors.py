"""Fit a suite's anchors once, at its release: play the references among themselves on every game
and seed of the full suite (evaluation/suites.anchor_league), fit the pooled Bradley-Terry ratings and
print them, with the fit's provenance, as the YAML to paste into the suite file. Run it only for a
suite not yet released; on a released suite it re-plays (or re-reads) the tournament to check the
frozen anchors and changes nothing.

    .venv/bin/python scripts/fit_suite_anchors.py core-v1 --db sqlite:///anchors-core-v1.db

The tournament is an ordinary league (`anchors core-v1`): a killed run resumes with the same command.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import shlex
import sys

import yaml

from arena.redaction import redact
from evaluation.anchored import fit_anchors
from evaluation.suites import anchor_league, load_suite
from league.runner import run_league
from league.store import Store


def machine() -> str:
    """What played the tournament: CPU count and the libraries the LLM reference ran on."""
    parts = [f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores"]
    try:
        import torch
        import transformers

        device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
        parts.append(f"{device}; torch {torch.__version__}, transformers {transformers.__version__}")
    except ImportError:
        parts.append("no torch")
    return "; ".join(parts)


def provenance(matches: int, aborted: int, wall_s: float | None) -> dict:
    fit = {
        "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        "command": redact(shlex.join(["python", "scripts/fit_suite_anchors.py", *sys.argv[1:]])),
        "matches": matches,
        "aborted": aborted,
        "machine": machine(),
        "method": "league.ratings.leaderboard(by='bt', pooling='games', bootstrap=0): each game weighs the same",
    }
    if wall_s is not None:
        fit["wall_s"] = round(wall_s)
    return fit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite")
    parser.add_argument("--db", required=True, help="store for the reference tournament (kept: it is the evidence)")
    args = parser.parse_args()
    suite = load_suite(args.suite)
    if suite.anchors():
        print(f"# {suite.name} is released: its anchors are frozen; this run only checks them", file=sys.stderr)
    config = anchor_league(suite)
    store = Store(args.db)
    summary = asyncio.run(run_league(config, store, handle_signals=True))
    if summary.interrupted:
        raise SystemExit("interrupted: run the same command again to finish the tournament")
    league_id = store.league_id(config.name)
    results = store.results(league_id)
    anchors = fit_anchors(results)
    by_reference = {r.name: anchors[suite.store_name(r.name)] for r in suite.references}
    # wall time only when this run played the whole tournament (a resumed run saw only part of it)
    wall_s = summary.elapsed_s if summary.played_now == len(results) else None
    fit = provenance(len(results), store.count(league_id, "aborted"), wall_s)
    print(f"# {len(results)} reference matches; paste each anchor under its reference, and anchor_fit at the top level")
    print(yaml.safe_dump({"anchors": by_reference, "anchor_fit": fit}, sort_keys=False, width=100), end="")
    frozen = suite.anchors()
    if frozen:
        moved = {name: (frozen.get(name), value) for name, value in by_reference.items() if frozen.get(name) != value}
        print("# the frozen anchors: " + ("reproduced exactly" if not moved else f"differ (frozen, refit): {moved}"))


if __name__ == "__main__":
    main()
