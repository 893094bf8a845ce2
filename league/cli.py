"""`arena league ...`, `arena leaderboard`, `arena policy ...`, `arena export`."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)

league_app = typer.Typer(help="Run tournaments and inspect them.", no_args_is_help=True)
policy_app = typer.Typer(help="Policies known to the league store.", no_args_is_help=True)

DB_HELP = "SQLAlchemy URL of the league store (default: $ARENA_DB or sqlite:///arena.db)."


def _fail(message: str) -> typer.Exit:
    err.print(f"error: {message}", markup=False, soft_wrap=True)
    return typer.Exit(code=2)


def _store(db: Optional[str]):
    from league.store import Store

    try:
        return Store(db)
    except Exception as exc:  # noqa: BLE001 - a bad URL or an unreachable server is one line
        raise _fail(f"cannot open the league store {db or ''}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")


def _league_id(store, league: Optional[str]) -> Optional[int]:
    if league is None:
        return None
    if league not in store.league_names():
        raise _fail(f"no league named {league!r} in {store.url} (leagues: {', '.join(store.league_names()) or 'none'})")
    return store.league_id(league)


@league_app.command("run")
def run_command(
    config_path: Path = typer.Argument(..., help="League file (YAML)."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display."),
) -> None:
    """Play (or resume) a league: the same command continues a killed run.

    Example: arena league run examples/demo-league.yaml --db sqlite:///demo.db
    """
    from league.config import ConfigError, load_config
    from league.ratings import leaderboard
    from league.runner import run_league

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise _fail(str(exc))
    store = _store(db or config.db)
    started = time.perf_counter()
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
        TextColumn("{task.fields[leader]}"), console=console, disable=quiet,
    )
    task = progress.add_task(config.name, total=None, leader="")
    recent = []

    def on_finish(record, finished, total):
        recent.append(record)
        leader = ""
        if finished % 10 == 0 or finished == total:
            rows = leaderboard(store.results(store.league_id(config.name)), by="trueskill")
            leader = f"leader: {rows[0].policy} ({rows[0].rating:.1f})" if rows else ""
        progress.update(task, completed=finished, total=total, **({"leader": leader} if leader else {}))

    try:
        with progress:
            summary = asyncio.run(run_league(config, store, on_finish=on_finish))
    except KeyboardInterrupt:
        league_id = store.league_id(config.name)
        err.print(
            f"interrupted: {store.count(league_id, 'finished')} matches are stored; matches in flight were dropped "
            f"and will be replayed. Resume with: arena league run {config_path}" + (f" --db {db}" if db else ""),
            markup=False,
        )
        raise typer.Exit(code=130)
    from league.snapshots import rerate

    rerate(store, summary.league_id)
    elapsed = time.perf_counter() - started
    console.print(
        f"{config.name}: {summary.finished} matches stored ({summary.played_now} played now"
        f"{f', {summary.replayed} replayed after an interrupted run' if summary.replayed else ''}) in {elapsed:.1f} s; db {store.url}"
    )
    _print_leaderboard(store, summary.league_id, "trueskill", None)


@league_app.command("status")
def status_command(db: Optional[str] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Matches finished and still scheduled, per league.

    Example: arena league status --db sqlite:///demo.db
    """
    store = _store(db)
    table = Table(title=f"Leagues in {store.url}")
    for column in ("league", "finished", "scheduled (will replay)", "aborted"):
        table.add_column(column)
    for name in store.league_names():
        league_id = store.league_id(name)
        table.add_row(name, str(store.count(league_id, "finished")), str(store.count(league_id, "scheduled")), str(store.count(league_id, "aborted")))
    console.print(table)


@league_app.command("rerate")
def rerate_command(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    league: Optional[str] = typer.Option(None, help="Only this league."),
) -> None:
    """Recompute every rating snapshot from the stored match log.

    Example: arena league rerate --db sqlite:///demo.db
    """
    from league.snapshots import rerate

    store = _store(db)
    names = [league] if league else store.league_names()
    for name in names:
        count = rerate(store, store.league_id(name))
        console.print(f"{name}: {count} snapshot rows")


def _print_leaderboard(store, league_id: Optional[int], by: str, game: Optional[str]) -> None:
    from league.ratings import leaderboard

    rows = leaderboard(store.results(league_id, game), by=by, game=game)
    title = f"Leaderboard ({by}{', ' + game if game else ', all games'})"
    table = Table(title=title)
    for column, justify in (("rank", "right"), ("policy", "left"), ("rating", "right"), ("95% CI", "right"), ("games", "right"), ("W/D/L", "right")):
        table.add_column(column, justify=justify)
    for row in rows:
        ci = "-" if row.lo == row.hi else f"{row.lo:.1f} .. {row.hi:.1f}"
        table.add_row(str(row.rank), row.policy, f"{row.rating:.1f}", ci, str(row.games), f"{row.wins}/{row.draws}/{row.losses}")
    console.print(table)
    if by == "trueskill":
        console.print("rating = mu - 3 sigma (conservative); CI = mu -/+ 1.96 sigma; rank = 1 + policies whose CI lies wholly above")


def leaderboard_command(
    game: Optional[str] = typer.Option(None, help="Only this game (default: all games)."),
    by: str = typer.Option("trueskill", help="trueskill, elo or bt."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    league: Optional[str] = typer.Option(None, help="Only this league (default: every match in the store)."),
) -> None:
    """Ratings with 95% confidence intervals and CI-respecting ranks.

    Example: arena leaderboard --by bt --game tictactoe
    """
    from league.ratings import SYSTEMS

    if by not in SYSTEMS:
        raise _fail(f"--by {by!r}: choose one of {', '.join(SYSTEMS)}")
    store = _store(db)
    _print_leaderboard(store, _league_id(store, league), by, game)


@policy_app.command("list")
def policy_list(db: Optional[str] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Example: arena policy list"""
    store = _store(db)
    table = Table(title="Policies")
    table.add_column("name")
    table.add_column("spec")
    for row in store.policies():
        table.add_row(row.name, row.spec)
    console.print(table)


@policy_app.command("add")
def policy_add(
    spec: str = typer.Argument(..., help="Policy spec, e.g. openai:gpt-4o-mini,temperature=0"),
    name: Optional[str] = typer.Option(None, help="Display name (default: the spec)."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Example: arena policy add local,temperature=0.3 --name smol-cold"""
    from arena.policy import PolicySpec, PolicySpecError, known_kinds

    try:
        kind = PolicySpec.parse(spec).kind
    except PolicySpecError as exc:
        raise _fail(str(exc))
    if kind not in known_kinds():
        raise _fail(f"unknown policy {spec!r} (kinds: {', '.join(sorted(known_kinds()))})")
    _store(db).upsert_policy(name or spec, spec)
    console.print(f"added {name or spec}")


@policy_app.command("remove")
def policy_remove(name: str, db: Optional[str] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Example: arena policy remove smol-cold"""
    if not _store(db).remove_policy(name):
        raise _fail(f"no policy named {name!r}")
    console.print(f"removed {name}")


def export_command(
    out: Path = typer.Option(..., "--out", help="JSONL file to write."),
    kind: str = typer.Option("records", help="records (full match records), sft (winners' turns as chat) or dpo (chosen/rejected pairs)."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    league: Optional[str] = typer.Option(None, help="Only this league."),
) -> None:
    """Export stored matches as JSONL.

    Example: arena export --kind records --out matches.jsonl
    """
    from league.export import EXPORTERS

    if kind not in EXPORTERS:
        raise _fail(f"--kind {kind!r}: choose one of {', '.join(EXPORTERS)}")
    store = _store(db)
    count = EXPORTERS[kind](store, _league_id(store, league), out)
    console.print(f"wrote {count} {kind} rows to {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(league_app, name="league")
    app.add_typer(policy_app, name="policy")
    app.command("leaderboard")(leaderboard_command)
    app.command("export")(export_command)
