"""`arena league run|status|rerate`: play (or resume) a league with live standings, show what each
league in a store has played, and recompute ratings from the stored match log."""

from __future__ import annotations

import asyncio
import shlex
import time
from pathlib import Path
from typing import Any, Optional

import typer
from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from arena.redaction import redact
from arena.user_errors import fail
from league.cli.leaderboard import print_leaderboard
from league.cli.store_option import DB_HELP, league_id_of, open_store

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)

league_app = typer.Typer(help="Run tournaments and inspect them.", no_args_is_help=True)

EXECUTORS = ("local", "ray")
RAY_MISSING = "--executor ray needs Ray, which is not installed here: pip install 'llm-arena[ray]'"
STANDINGS_REFRESH_S = 0.5


class LiveView:
    """A progress bar with ETA over live standings (TrueSkill, folded match by match)."""

    def __init__(self, name: str, enabled: bool) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), console=console,
        )
        self.task = self.progress.add_task(name, total=None, rate="")
        self.table = Table(title="live standings (TrueSkill mu - 3 sigma)", title_justify="left")
        self.live = Live(Group(self.progress, self.table), console=console, refresh_per_second=4, transient=False) if enabled else None
        self.last_table = 0.0
        self.started = time.perf_counter()
        self.first = 0

    def __enter__(self) -> "LiveView":
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)
            # rich ends the last frame with a newline only on a terminal; piped into a file or a
            # log, the next line (the run's summary) would be glued to the table's bottom border.
            if not console.is_terminal:
                console.line()

    def on_start(self, finished: int, total: Optional[int], replaying: int) -> None:
        self.first = finished
        self.progress.update(self.task, completed=finished, total=total)
        if replaying and self.live is not None:
            console.print(f"resuming: {finished} matches already stored, {replaying} unfinished will be replayed from scratch")

    def on_finish(self, done: Any) -> None:
        if self.live is None:
            return
        played = done.finished - self.first
        rate = played / max(1e-9, time.perf_counter() - self.started)
        self.progress.update(self.task, completed=done.finished, total=done.total, rate=f"{rate:.1f}/s, {done.in_flight} in flight")
        now = time.perf_counter()
        if now - self.last_table >= STANDINGS_REFRESH_S or done.finished == done.total:
            self.last_table = now
            self.table = _standings_table(done.ratings.rows("trueskill", None)[:12])
            self.live.update(Group(self.progress, self.table))


def _standings_table(rows: list) -> Table:
    table = Table(title="live standings (TrueSkill mu - 3 sigma)", title_justify="left")
    for column in ("#", "policy", "rating", "games", "W/D/L"):
        table.add_column(column, justify="left" if column == "policy" else "right")
    for row in rows:
        table.add_row(str(row.rank), row.policy, f"{row.rating:.2f}", str(row.games), f"{row.wins}/{row.draws}/{row.losses}")
    return table


@league_app.command("run")
def run_command(
    config_path: Path = typer.Argument(..., help="League file (YAML); see examples/demo-league.yaml."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP + " Overrides the file's `db:`."),
    executor: str = typer.Option("local", help="Where matches run: local (asyncio in this process) or ray (Ray tasks on a cluster; see docs/cluster.md)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="With --executor ray: the cluster to join (auto, HOST:PORT or ray://HOST:PORT; default: $RAY_ADDRESS, else a local Ray instance)."),
    ray_cpus_per_match: Optional[float] = typer.Option(None, "--ray-cpus-per-match", min=0.01, max=64, help="With --executor ray: CPUs each match task reserves (default: 1 for bot-only matches, 0.25 when a seat waits on a model or an API)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display."),
) -> None:
    """Play (or resume) a league. The same command continues a killed or interrupted run: finished
    matches are kept, unfinished ones replayed with the same seed.

    Example: arena league run examples/demo-league.yaml --db sqlite:///demo.db
    (on a Ray cluster: arena league run league.yaml --executor ray --ray-address auto --db postgresql+psycopg://arena@db-host/arena)
    """
    from league.config import ConfigError, load_config
    from league.runner import LeagueError, run_league
    from league.store import StoreError

    if executor not in EXECUTORS:
        raise fail(f"--executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    if executor != "ray" and (ray_address is not None or ray_cpus_per_match is not None):
        flag = "--ray-address" if ray_address is not None else "--ray-cpus-per-match"
        raise fail(f"{flag} needs --executor ray")
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise fail(str(exc))
    url = db or config.db
    store = open_store(url)
    resume = "arena league run " + shlex.quote(str(config_path)) + (f" --db {shlex.quote(url)}" if db else "")
    if executor == "ray":
        resume += " --executor ray" + (f" --ray-address {shlex.quote(ray_address)}" if ray_address else "")
    resume = redact(resume)  # printed: a --db URL may carry a password (the user retypes it)
    runner_executor = _ray_executor(config, ray_address, ray_cpus_per_match) if executor == "ray" else None
    view = LiveView(config.name, enabled=not quiet)
    try:
        with view:
            summary = asyncio.run(run_league(
                config, store, on_start=view.on_start, on_finish=view.on_finish, handle_signals=True, executor=runner_executor,
            ))
    except (LeagueError, StoreError) as exc:
        raise fail(f"{config_path}: {exc}")
    except KeyboardInterrupt:  # Ctrl-C outside the match loop: starting up, or the final rerate
        err.print(f"interrupted; every finished match is stored and nothing was lost. Resume with: {resume}", markup=False, soft_wrap=True)
        raise typer.Exit(code=130)
    if summary.interrupted:
        err.print(
            f"interrupted: {summary.finished} matches stored ({summary.played_now} by this run); "
            f"{summary.abandoned} in flight were abandoned and will be replayed. Resume with: {resume}",
            markup=False, soft_wrap=True,
        )
        _exit_now_if_workers_linger(store, 130)
        raise typer.Exit(code=130)
    replayed = f", {summary.replayed} replayed after an interrupted run" if summary.replayed else ""
    aborted = f", {summary.aborted} aborted without a result" if summary.aborted else ""
    if summary.abandoned:  # lost by the executor (workers died more often than it retries)
        aborted += f", {summary.abandoned} lost with their workers (replayed by: {resume})"
    if summary.held_elsewhere:  # two runners of one league: never replay what the other is playing
        aborted += f", {summary.held_elsewhere} found running under another runner and left to it, not replayed"
    console.print(
        f"{config.name}: {summary.finished} matches stored ({summary.played_now} played now{replayed}{aborted}) "
        f"in {summary.elapsed_s:.1f} s; db {store._safe_url()}",
        soft_wrap=True,
    )
    print_leaderboard(store, summary.league_id, "trueskill", None, 200)


def _ray_executor(config: Any, address: Optional[str], cpus_per_match: Optional[float]) -> Any:
    """The Ray executor, connected now, so a missing Ray or an unreachable cluster is one line."""
    try:
        from league.ray_executor import RayExecutor
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == "ray":
            raise fail(RAY_MISSING)
        raise
    from league.runner import LeagueError

    executor = RayExecutor(config, address, cpus_per_match)
    try:
        executor.connect()
    except LeagueError as exc:
        raise fail(str(exc))
    return executor


def _exit_now_if_workers_linger(store: Any, code: int) -> None:
    """Everything is committed; a worker thread still finishing an abandoned generation (a local
    model's batch) would hold the exit for its whole duration, so leave without joining it."""
    import os
    import sys
    import threading

    if any(t is not threading.main_thread() and not t.daemon and t.is_alive() for t in threading.enumerate()):
        store.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


# ---- status and rerate -----------------------------------------------------------------
@league_app.command("status")
def status_command(db: Optional[str] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Matches per league and status: finished, running, still scheduled, abandoned, aborted.
    Anything not finished or aborted is replayed when the league is run again.

    Example: arena league status --db sqlite:///demo.db
    """
    from league.config import ConfigError, parse_config
    from league.runner import build_scheduler

    store = open_store(db, must_exist=True)
    table = Table(title=f"Leagues in {store._safe_url()}", box=box.SIMPLE_HEAD)
    for column in ("league", "planned", "finished", "running", "scheduled", "abandoned", "aborted"):
        table.add_column(column, justify="left" if column == "league" else "right", no_wrap=True)
    for row in store.leagues():
        counts = store.status_counts(row.id)
        try:
            total = build_scheduler(parse_config(dict(row.config), row.name)).total()
        except (ConfigError, ValueError, TypeError):
            total = None
        table.add_row(
            row.name, "open" if total is None else str(total),
            *(str(counts.get(s, 0)) for s in ("finished", "running", "scheduled", "abandoned", "aborted")),
        )
    console.print(table)
    if not store.leagues():
        console.print("no leagues yet: arena league run examples/demo-league.yaml")


@league_app.command("rerate")
def rerate_command(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    league: Optional[str] = typer.Option(None, help="Only this league (default: every league)."),
) -> None:
    """Recompute every rating snapshot from the stored match log (the log is the truth).

    Example: arena league rerate --db sqlite:///demo.db
    """
    from league.snapshots import rerate

    store = open_store(db, must_exist=True)
    names = [league] if league else store.league_names()
    for name in names:
        league_id = league_id_of(store, name)
        assert league_id is not None
        count = rerate(store, league_id)
        console.print(f"{name}: {store.count(league_id, 'finished')} matches -> {count} snapshot rows")
