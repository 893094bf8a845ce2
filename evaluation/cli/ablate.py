"""`arena ablate`: variants of a policy (or other policies) against a baseline, every pairing played
on both seats of the same chance seeds, with a null variant for the noise and a paired permutation
test; the report says which differences the data support (terminal, JSON, markdown with a plot).

The plan (evaluation/ablation_plan.py) becomes an ordinary league, `ablate NAME`, played by the
league runner into the league store: the same command resumes a killed or interrupted run, and
once it is complete only re-reads the report. evaluation/cli/__init__.py registers the command.
"""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Any, Optional

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.redaction import redact
from arena.user_errors import fail
from evaluation.ablation_report import MOVE_COLUMNS, p_text, plural, signed, title
from league.cli.store_option import DB_HELP, open_store

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)

REPORT_CAPTION = ("diff: the policy's points minus its opponent's per game (win 1, draw 1/2), mean over pairs; "
                  "p: exact two-sided sign-flip test; Holm p: adjusted across the comparisons but the null's; "
                  "sig: the data support a difference at alpha 0.05 (for the null: a warning)")


def ablate_command(
    config_path: Optional[Path] = typer.Argument(None, help="An ablation file (YAML; see examples/ablate.yaml), or give the plan in flags."),
    policy: Optional[str] = typer.Option(None, "--policy", "-p", help="The baseline: SPEC, or NAME=SPEC to store it under NAME."),
    variants: list[str] = typer.Option([], "--variant", help="A variant: NAME=SPEC (or a SPEC, named by itself). Repeat for more."),
    games: list[str] = typer.Option([], "--game", "-g", help="A two-player game id. Repeat for more."),
    pairs: Optional[int] = typer.Option(None, "--pairs", help="Chance seeds per game; each is played twice per comparison, seats swapped."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the chance seeds (default 0)."),
    name: Optional[str] = typer.Option(None, "--name", help="The ablation's name: its league is `ablate NAME` (default: the baseline's name)."),
    null: Optional[bool] = typer.Option(None, "--null/--no-null", help="Add the null variant, the baseline with draws of its own (default: on)."),
    all_pairs: bool = typer.Option(False, "--all-pairs", help="The variants also play each other (the null plays only the baseline)."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP + " Overrides the file's `db:`."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", min=1, max=4096, help="Matches in flight (default 8)."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the report as JSON here (schema: docs/ablate.md)."),
    markdown_path: Optional[Path] = typer.Option(None, "--markdown", help="Write the report as markdown here, with a PNG plot beside it."),
    report_only: bool = typer.Option(False, "--report", help="Play nothing: report what the store holds of this ablation."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display."),
) -> None:
    """Compare variants of a policy against it: every variant and a null variant play the baseline
    on both seats of the same chance seeds; a paired permutation test says which differences the
    data support. A killed or interrupted run resumes when the same command runs again.

    Example: arena ablate --policy local,max_new_tokens=8 --variant vote3=local,max_new_tokens=8,sampler=vote:3 --game tictactoe --pairs 20 --db sqlite:///ablate.db
    """
    from evaluation.ablation_plan import FLAGS, PlanError, load_plan, parse_plan

    plan_flags = {"baseline": policy, "variants": variants or None, "games": games or None, "pairs": pairs, "seed": seed,
                  "name": name, "null_variant": null, "all_pairs": all_pairs or None}
    given = {key: value for key, value in plan_flags.items() if value is not None}
    try:
        if config_path is not None:
            if given:
                flag = FLAGS.get(next(iter(given)), "")
                raise fail(f"{flag}: the plan is in {config_path}; give it there or in flags, not both")
            plan = load_plan(config_path)
        elif policy is None:
            raise fail("give an ablation file or the plan in flags (--policy SPEC --variant NAME=SPEC --game GAME --pairs N); see arena ablate --help")
        else:
            plan = parse_plan(given, "arena ablate", flags=True)
    except PlanError as exc:
        raise fail(str(exc))
    if concurrency:
        plan = plan.model_copy(update={"concurrency": concurrency})
    url = db or plan.db
    config = plan.league_config()
    store = open_store(url, must_exist=report_only)
    _check_stored_plan(store, plan, config, url)
    resume = redact(_resume_command(config_path, plan_flags, db))  # printed: a --db URL may carry a password
    summary = None
    if not report_only:
        summary = _play(store, config, plan.name, quiet, resume)
    elif store.league_id(config.name) is None:
        raise fail(f"no ablation {plan.name!r} in {store._safe_url()}: run it first (the same command without --report)")
    from evaluation.ablation_report import ablation_report

    from league.move_stats import move_stats

    league_id = store.league_id(config.name)
    with store.session() as session:
        moves = move_stats(session, league_id).get("", {}) if league_id is not None else {}
    records = store.iter_records(league_id) if league_id is not None else []
    report = ablation_report(plan, records, planned_matches=len(config.matches), moves=moves)
    print_report(report)
    _write_files(report, json_path, markdown_path)
    if summary is not None and summary.interrupted:
        err.print(f"interrupted: {summary.finished} of {len(config.matches)} matches stored; the report covers the complete pairs. "
                  f"Resume with: {resume}", markup=False, soft_wrap=True)
        raise typer.Exit(code=130)


def _check_stored_plan(store: Any, plan: Any, config: Any, url: Optional[str]) -> None:
    """An ablation of this name stored with another plan is refused, naming the way out."""
    from league.store import StoreError

    try:
        store.check_league(config.name, config.schedule_hash())
    except StoreError:
        raise fail(f"ablation {plan.name!r} is stored in {store._safe_url()} with other policies, games, pairs or seed: "
                   "give this one another --name (name: in a file), or use another --db") from None


def _play(store: Any, config: Any, name: str, quiet: bool, resume: str) -> Any:
    """Play (or resume) the ablation's league with a progress bar; returns the league summary."""
    from league.runner import LeagueError, run_league
    from league.store import StoreError

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, disable=quiet)
    task = progress.add_task(f"ablation {name}", total=None)

    def on_start(finished: int, total: Optional[int], replaying: int) -> None:
        progress.update(task, total=total, completed=finished)

    try:
        with progress:
            return asyncio.run(run_league(config, store, on_start=on_start, handle_signals=True,
                                          on_finish=lambda done: progress.update(task, completed=done.finished)))
    except (LeagueError, StoreError) as exc:
        raise fail(f"ablation {name!r}: {_variant_names(str(exc), config)}")
    except KeyboardInterrupt:  # Ctrl-C while starting up: nothing in flight
        err.print(f"interrupted; every finished match is stored. Resume with: {resume}", markup=False, soft_wrap=True)
        raise typer.Exit(code=130)


def _variant_names(message: str, config: Any) -> str:
    """The runner names a policy by its place in the league (`policies[2].spec`); the user knows it by name."""
    for i, entry in enumerate(config.policies):
        message = message.replace(f"policies[{i}].spec", f"policy {entry.name!r}")
    return message


def _resume_command(config_path: Optional[Path], flags: dict[str, Any], db: Optional[str]) -> str:
    """The command that continues this ablation, as the user would type it."""
    words = ["arena", "ablate"]
    if config_path is not None:
        words.append(str(config_path))
    else:
        words += ["--policy", flags["baseline"]]
        for variant in flags["variants"] or []:
            words += ["--variant", variant]
        for game in flags["games"] or []:
            words += ["--game", game]
        for key in ("pairs", "seed", "name"):
            if flags[key] is not None:
                words += [f"--{key}", str(flags[key])]
        if flags["null_variant"] is False:
            words.append("--no-null")
        if flags["all_pairs"]:
            words.append("--all-pairs")
    if db:
        words += ["--db", db]
    return shlex.join(words)


def print_report(report: dict[str, Any]) -> None:
    """The comparisons, what each harness costs, and the verdicts in words."""
    matches = report["matches"]
    state = "" if report["complete"] else f"; incomplete: {matches['finished']} of {matches['planned']} matches stored"
    table = Table(title=escape(title(report) + f", {plural(report['pairs_per_game'], 'pair')} per game, seed {report['seed']}{state}"),
                  title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("policy", overflow="fold", min_width=12)
    for column in ("pairs", "W/D/L", "diff", "95% CI", "p", "Holm p", "sig"):
        table.add_column(column, justify="right", no_wrap=True)
    rows = report["comparisons"]  # the null last
    for i, c in enumerate(rows):
        if c["role"] == "null" and i and rows[i - 1]["role"] != "null":
            table.add_section()
        label = c["policy"] if c["against"] == report["baseline"] else f"{c['policy']} vs {c['against']}"
        ci = "-" if c["ci95"] is None else f"{signed(c['ci95'][0])}..{signed(c['ci95'][1])}"
        supported = ("WARN" if c["significant"] else "no") if c["role"] == "null" else ("yes" if c["significant"] else "no")
        table.add_row(escape(label), str(c["pairs"]), f"{c['wins']}/{c['draws']}/{c['losses']}", signed(c["diff"]), ci,
                      p_text(c["p_value"]), p_text(c["p_holm"]), supported)
    console.print(table)
    console.print(REPORT_CAPTION, soft_wrap=True)
    costs = Table(title="what each policy's moves cost (as on the leaderboard)", title_justify="left",
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    costs.add_column("policy", overflow="fold", min_width=12)
    for _, header, _ in MOVE_COLUMNS:
        costs.add_column(header, justify="right", no_wrap=True)
    for row in report["policies"]:
        costs.add_row(escape(row["name"]), *(text(row[key]) for key, _, text in MOVE_COLUMNS))
    console.print(costs)
    for c in report["comparisons"]:
        console.print(f"- {c['verdict']}", markup=False, soft_wrap=True)


def _write_files(report: dict[str, Any], json_path: Optional[Path], markdown_path: Optional[Path]) -> None:
    from evaluation.ablation_files import write_markdown
    from evaluation.card_files import write_outputs

    for line in write_outputs(report, json_path, markdown_path, write_markdown, "report"):
        console.print(line)
