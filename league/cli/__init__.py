"""`arena league run|status|rerate`, `arena leaderboard`, `arena policy add|list|remove`, `arena export`.

llm_arena_cli/app.py calls `register(app)`. Every user mistake (a bad config, an unknown policy, a store
that cannot be opened) prints one line on stderr and exits 2; an interrupted league exits 130
after saying how to resume.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from arena.redaction import redact

console = Console(highlight=False)
err = Console(stderr=True, highlight=False)

league_app = typer.Typer(help="Run tournaments and inspect them.", no_args_is_help=True)
policy_app = typer.Typer(help="Policies registered in the league store.", no_args_is_help=True)

DB_HELP = "SQLAlchemy URL of the league store, e.g. sqlite:///arena.db or postgresql+psycopg://user@host/db (default: $ARENA_DB, else sqlite:///arena.db)."
EXECUTORS = ("local", "ray")
RAY_MISSING = "--executor ray needs Ray, which is not installed here: pip install 'llm-arena[ray]'"
STANDINGS_REFRESH_S = 0.5


def _fail(message: str) -> typer.Exit:
    err.print(f"error: {redact(message)}", markup=False, soft_wrap=True)
    return typer.Exit(code=2)


def _store(db: Optional[str], *, must_exist: bool = False) -> Any:
    """The league store at `db`. Commands that only read pass `must_exist`: opening a Store creates
    the database, so a mistyped URL would otherwise read as an empty league and exit 0."""
    from league.db import default_db_url
    from league.store import Store, store_exists

    try:
        if must_exist and not store_exists(db):
            shown = _hide_password(db or default_db_url())
            raise _fail(f"no league store at {shown} (check --db; `arena league run CONFIG --db {shown}` starts one)")
        return Store(db)
    except typer.Exit:
        raise
    except Exception as exc:  # noqa: BLE001 - a bad URL or an unreachable server is one line
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise _fail(f"cannot open the league store {_hide_password(db) or ''}: {type(exc).__name__}: {detail}")


def _hide_password(url: Optional[str]) -> Optional[str]:
    if not url:
        return url
    from sqlalchemy.engine import make_url

    try:
        return redact(make_url(url).render_as_string(hide_password=True))  # a token may sit in the query
    except Exception:  # noqa: BLE001 - not a URL at all: show nothing of it
        return "(unparsable URL)"


def _league_id(store: Any, league: Optional[str]) -> Optional[int]:
    if league is None:
        return None
    league_id = store.league_id(league)
    if league_id is None:
        raise _fail(f"no league named {league!r} in {store._safe_url()} (leagues: {', '.join(store.league_names()) or 'none'})")
    return league_id


# ---- arena league run ---------------------------------------------------------------------------
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
        raise _fail(f"--executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    if executor != "ray" and (ray_address is not None or ray_cpus_per_match is not None):
        flag = "--ray-address" if ray_address is not None else "--ray-cpus-per-match"
        raise _fail(f"{flag} needs --executor ray")
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise _fail(str(exc))
    url = db or config.db
    store = _store(url)
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
        raise _fail(f"{config_path}: {exc}")
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
    _print_leaderboard(store, summary.league_id, "trueskill", None, 200)


def _ray_executor(config: Any, address: Optional[str], cpus_per_match: Optional[float]) -> Any:
    """The Ray executor, connected now, so a missing Ray or an unreachable cluster is one line."""
    try:
        from league.ray_executor import RayExecutor
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == "ray":
            raise _fail(RAY_MISSING)
        raise
    from league.runner import LeagueError

    executor = RayExecutor(config, address, cpus_per_match)
    try:
        executor.connect()
    except LeagueError as exc:
        raise _fail(str(exc))
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


# ---- arena league status / rerate -----------------------------------------------------------------
@league_app.command("status")
def status_command(db: Optional[str] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Matches per league and status: finished, running, still scheduled, abandoned, aborted.
    Anything not finished or aborted is replayed when the league is run again.

    Example: arena league status --db sqlite:///demo.db
    """
    from league.config import ConfigError, parse_config
    from league.runner import build_scheduler

    store = _store(db, must_exist=True)
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

    store = _store(db, must_exist=True)
    names = [league] if league else store.league_names()
    for name in names:
        league_id = _league_id(store, name)
        assert league_id is not None
        count = rerate(store, league_id)
        console.print(f"{name}: {store.count(league_id, 'finished')} matches -> {count} snapshot rows")


# ---- arena leaderboard ----------------------------------------------------------------------------
def _print_leaderboard(store: Any, league_id: Optional[int], by: str, game: Optional[str], bootstrap: int,
                       ci: str = "bootstrap", pooling: str = "games") -> None:
    from league.rating_display import estimate, has_interval, missing_interval_reason, rank_ties
    from league.ratings import leaderboard
    from league.results import is_rated

    results = store.results(league_id, game)
    rows = leaderboard(results, by=by, game=game, bootstrap=bootstrap, ci=ci, pooling=pooling)
    table = Table(title=f"Leaderboard: {by}, {game or 'all games'}, {len(results)} matches", title_justify="left")
    # Each number sits beside the interval of that same number (league/rating_display.py).
    value_columns = {
        "trueskill": [("mu", "right"), ("95% CI of mu", "right"), ("mu - 3 sigma", "right")],
        "bt": [("rating", "right"), ("95% CI", "right")],
        "elo": [("rating", "right")],
    }[by]
    for column, justify in (("rank", "right"), ("policy", "left"), *value_columns, ("games", "right"), ("W/D/L", "right"), ("score %", "right")):
        table.add_column(column, justify=justify)
    for row in rows:
        interval = f"{row.lo:.1f} .. {row.hi:.1f}" if has_interval(row.lo, row.hi) else "not computed"
        values = [f"{estimate(by, row.rating, row.lo, row.hi):.1f}", interval, f"{row.rating:.1f}"][: len(value_columns)]
        score = (row.wins + 0.5 * row.draws) / row.games * 100 if row.games else 0.0
        table.add_row(str(row.rank), row.policy, *values, str(row.games), f"{row.wins}/{row.draws}/{row.losses}", f"{score:.0f}")
    console.print(table)
    notes = {
        "trueskill": "TrueSkill: mu with its 95% CI (mu -/+ 1.96 sigma); rows ordered by the conservative mu - 3 sigma",
        "elo": "Elo in log order (K=32)",
        "bt": "Bradley-Terry MLE (ties = half wins; "
              + ("games weighted equally when pooled" if pooling == "games" else "every match weighted once when pooled") + ")"
              # the interval's method only where an interval is shown (a footer must not promise one)
              + ("" if not any(has_interval(row.lo, row.hi) for row in rows) else "; 95% CI = "
                 + (f"{bootstrap} bootstrap resamples of the matches" if ci == "bootstrap" else "sandwich (robust) standard errors x 1.96")),
    }
    rank_rule = "; rank = 1 + policies whose CI lies wholly above" if by != "elo" else ""
    console.print(notes[by] + rank_rule, soft_wrap=True)
    if rows and not any(has_interval(row.lo, row.hi) for row in rows):
        console.print(missing_interval_reason(by, bootstrap=bootstrap if ci == "bootstrap" else None,
                                              rated_matches=sum(map(is_rated, results))), soft_wrap=True)
    for note in rank_ties(rows, by):
        console.print(note, soft_wrap=True, markup=False)


def leaderboard_command(
    game: Optional[str] = typer.Option(None, "--game", help="Only this game id (default: all games pooled)."),
    by: str = typer.Option("trueskill", "--by", help="trueskill, elo or bt (Bradley-Terry)."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    league: Optional[str] = typer.Option(None, "--league", help="Only this league (default: every match in the store)."),
    bootstrap: int = typer.Option(200, "--bootstrap", min=0, max=10_000, help="Bradley-Terry bootstrap resamples for the CI."),
    ci: str = typer.Option("bootstrap", "--ci", help="Bradley-Terry CI: bootstrap (resampled matches) or sandwich (robust standard errors, as LMArena)."),
    pooling: str = typer.Option("games", "--pooling", help="Bradley-Terry over several games: games (each game weighs the same, as Kaggle Game Arena's unified board) or matches (each match once)."),
) -> None:
    """Ratings with 95% confidence intervals and ranks that respect them.

    Example: arena leaderboard --by bt --game tictactoe --db sqlite:///demo.db
    Example: arena leaderboard --by bt --ci sandwich --pooling matches
    """
    from league.ratings import CI_METHODS, POOLINGS, SYSTEMS

    if by not in SYSTEMS:
        raise _fail(f"--by {by!r}: choose one of {', '.join(SYSTEMS)}")
    if ci not in CI_METHODS:
        raise _fail(f"--ci {ci!r}: choose one of {', '.join(CI_METHODS)}")
    if pooling not in POOLINGS:
        raise _fail(f"--pooling {pooling!r}: choose one of {', '.join(POOLINGS)}")
    if by != "bt" and (ci, pooling) != ("bootstrap", "games"):
        raise _fail(f"--ci and --pooling apply to --by bt only (got --by {by})")
    store = _store(db, must_exist=True)
    league_id = _league_id(store, league)
    if game and game not in {g for g in _games_played(store, league_id)}:
        raise _fail(f"--game {game!r}: no finished matches of that game (games: {', '.join(_games_played(store, league_id)) or 'none'})")
    _print_leaderboard(store, league_id, by, game, bootstrap, ci, pooling)


def _games_played(store: Any, league_id: Optional[int]) -> list[str]:
    return sorted({r.game_id for r in store.results(league_id)})


# ---- arena policy ---------------------------------------------------------------------------------
@policy_app.command("list")
def policy_list(db: Optional[str] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Registered policies with their specs.

    Example: arena policy list --db sqlite:///demo.db
    """
    store = _store(db, must_exist=True)
    table = Table(title="Policies")
    for column in ("name", "display name", "spec", "metadata"):
        table.add_column(column)
    for row in store.policies():
        notes = ", ".join(f"{k}={v}" for k, v in sorted(row.meta.items()))
        table.add_row(row.name, redact(row.display_name), redact(row.spec), redact(notes))  # stores from before redaction too
    console.print(table)


@policy_app.command("add")
def policy_add(
    spec: str = typer.Argument(..., help="Policy spec, e.g. openai:gpt-4o-mini,temperature=0 (keys come from env vars, never the spec)."),
    name: Optional[str] = typer.Option(None, "--name", help="Name in the store and leaderboards (default: the spec)."),
    display_name: Optional[str] = typer.Option(None, "--display-name", help="Label for the web leaderboard."),
    meta: list[str] = typer.Option([], "--meta", help="KEY=VALUE notes, repeatable (key-like fields are dropped)."),
    replace: bool = typer.Option(False, "--replace", help="Change the spec of an existing name."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Register a policy.

    Example: arena policy add local,temperature=0.3 --name smol-cold --meta note=baseline
    """
    from league.config import check_spec
    from league.store import StoreError

    problem = check_spec(spec)
    if problem:
        raise _fail(problem)
    notes: dict[str, str] = {}
    for item in meta:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise _fail(f"--meta {item!r}: expected KEY=VALUE")
        notes[key.strip()] = value.strip()
    try:
        _store(db).upsert_policy(name or spec, spec, notes, display_name or "", replace=replace)
    except StoreError as exc:
        raise _fail(str(exc))
    console.print(f"added {name or spec} ({redact(spec)})", markup=False)


@policy_app.command("remove")
def policy_remove(
    name: str = typer.Argument(..., help="The policy's name."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Forget a registered policy (its matches stay in the log and in ratings).

    Example: arena policy remove smol-cold
    """
    if not _store(db, must_exist=True).remove_policy(name):
        raise _fail(f"no policy named {name!r}")
    console.print(f"removed {name}")


# ---- arena export ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ExportKind:
    """An export kind composed above league: `write(store, out, league_id, game, push)` writes `out`
    and returns the line to print (a mistake raises typer.Exit after one line on stderr); `pushes`
    says whether it takes --push."""

    write: Callable[[Any, Path, Optional[int], Optional[str], Optional[str]], str]
    pushes: bool = False


# Kinds that need a layer above league (`atropos` scores groups with trainer's rewards), added by
# that layer's command module through `register_export_kind`, so league never imports it.
EXPORT_KINDS_FROM_ABOVE: dict[str, ExportKind] = {}


def register_export_kind(kind: str, write: Callable[[Any, Path, Optional[int], Optional[str], Optional[str]], str], *, pushes: bool = False) -> None:
    EXPORT_KINDS_FROM_ABOVE[kind] = ExportKind(write, pushes)


def export_command(
    out: Path = typer.Option(..., "--out", help="JSONL file to write."),
    kind: str = typer.Option("records", "--kind", help="records (full match records), sft (winners' valid turns as chat messages), dpo (chosen/rejected replies at the same state), battles (LMArena's model_a/model_b/winner rows) or atropos (scored groups of exact token ids for an Atropos hub)."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    league: Optional[str] = typer.Option(None, "--league", help="Only this league."),
    game: Optional[str] = typer.Option(None, "--game", help="Only this game id."),
    push: Optional[str] = typer.Option(None, "--push", help="With --kind atropos: also POST the groups to this Atropos hub (run-api), e.g. http://127.0.0.1:8000."),
) -> None:
    """Export stored matches as JSONL: TRL's SFTTrainer and DPOTrainer formats, LMArena's battles,
    or Atropos scored groups (exact token ids; pushed to a `run-api` hub with --push).

    Example: arena export --kind sft --out sft.jsonl --db sqlite:///demo.db
    Example: arena export --kind battles --out battles.jsonl --db sqlite:///demo.db
    Example: arena export --kind atropos --out groups.jsonl --push http://127.0.0.1:8000
    """
    from league.export import EXPORTERS

    kinds = [*EXPORTERS, *EXPORT_KINDS_FROM_ABOVE]
    if kind not in kinds:
        raise _fail(f"--kind {kind!r}: choose one of {', '.join(kinds)}")
    from_above = EXPORT_KINDS_FROM_ABOVE.get(kind)
    if push and not (from_above and from_above.pushes):
        pushing = [name for name, entry in EXPORT_KINDS_FROM_ABOVE.items() if entry.pushes]
        raise _fail(f"--push needs --kind {' or '.join(pushing)} (got --kind {kind})" if pushing else "--push: no export kind here pushes")
    if out.parent and not out.parent.exists():
        raise _fail(f"--out {out}: folder {out.parent} does not exist")
    store = _store(db, must_exist=True)
    if from_above is not None:
        console.print(from_above.write(store, out, _league_id(store, league), game, push), soft_wrap=True, markup=False)
        return
    count = EXPORTERS[kind](store, out, league_id=_league_id(store, league), game=game)
    console.print(f"wrote {count} {kind} rows to {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(league_app, name="league")
    app.add_typer(policy_app, name="policy")
    app.command("leaderboard")(leaderboard_command)
    app.command("export")(export_command)
