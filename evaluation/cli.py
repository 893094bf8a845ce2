"""`arena eval suites` and `arena eval suite`: a policy scored on a frozen, versioned suite with an
anchored rating (league/suites, league/anchored.py, league/report_card.py; docs/eval.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.redaction import redact
from league.cli import DB_HELP, _fail, _store

console = Console(highlight=False)


def suites_command() -> None:
    """List the released suites: games, seeds, references and their frozen anchor ratings.

    Example: arena eval suites
    """
    from evaluation.suites import available_suites, evaluation_league, load_suite

    for name in available_suites():
        suite = load_suite(name)
        full, quick = (len(evaluation_league(suite, "random", "(candidate)", quick=q).matches) for q in (False, True))
        console.print(f"[bold]{suite.name}[/bold] (released {suite.released}): {full} matches; --quick {quick}", soft_wrap=True)
        console.print(suite.about, soft_wrap=True)
        games = Table(box=box.SIMPLE_HEAD, title_justify="left")
        for column in ("game", "players", "seeds", "references", "quick"):
            games.add_column(column, no_wrap=column == "game")
        for game in suite.games:
            quick_mark = f"{suite.quick.seeds_per_game} seeds" if game.id in suite.quick.games else ""
            games.add_row(game.id, str(game.players), str(len(game.seeds)), ", ".join(r.name for r in suite.references_for(game)), quick_mark)
        console.print(games)
        for game in suite.games:
            console.print(f"  {game.id}: {game.about}", soft_wrap=True)
        quick_refs = ", ".join(suite.quick.references) or "all"
        console.print(f"  --quick plays against: {quick_refs}", soft_wrap=True)
        refs = Table(box=box.SIMPLE_HEAD)
        for column in ("reference", "spec", "anchor", "what it is"):
            refs.add_column(column, overflow="fold")
        for ref in suite.references:
            refs.add_row(ref.name, ref.spec, "-" if ref.anchor is None else f"{ref.anchor:.1f}", ref.about)
        console.print(refs)
        fit = suite.anchor_fit
        if fit:
            console.print(f"  anchors fitted {fit.get('date', '?')} from {fit.get('matches', '?')} reference matches "
                          f"on {fit.get('machine', '?')}: {fit.get('command', '?')}", soft_wrap=True)
        else:
            console.print("  no anchors yet: cards of this suite have no rating", soft_wrap=True)


def suite_command(
    policy: str = typer.Option(..., "--policy", "-p", help="The policy spec to evaluate, e.g. local or openai:gpt-4o-mini."),
    suite_name: str = typer.Option("core-v1", "--suite", help="A released suite (arena eval suites lists them)."),
    quick: bool = typer.Option(False, "--quick", help="The suite's documented smoke subset (minutes on CPU)."),
    name: Optional[str] = typer.Option(None, "--name", help="How the policy appears in the store and the card (default: the spec)."),
    json_path: Optional[Path] = typer.Option(None, "--json", help="Write the card as JSON here (schema: docs/eval.md)."),
    markdown_path: Optional[Path] = typer.Option(None, "--markdown", help="Write the card as markdown here, with a PNG plot beside it."),
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", min=1, max=1024, help="Matches in flight (default 8)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress display."),
) -> None:
    """Play a frozen suite against its reference opponents and print the report card, with a rating
    anchored to the suite's fixed scale. A killed or interrupted run resumes when run again.

    Example: arena eval suite --policy local --quick --json card.json --db sqlite:///eval.db
    """
    from league.config import ConfigError
    from evaluation.suite_evaluation import run_evaluation
    from league.runner import LeagueError
    from league.store import StoreError
    from evaluation.suites import SuiteError, load_suite

    try:
        suite = load_suite(suite_name)
        name = (name or policy).strip()
        from evaluation.suite_evaluation import evaluation_config

        evaluation_config(suite, policy, name, quick)  # a bad spec or name fails here, in one line
        store = _store(db)
        progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, disable=quiet)
        task = progress.add_task(f"{suite.name}{' quick' if quick else ''}: {name}", total=None)

        def on_start(finished: int, total: Optional[int], replaying: int) -> None:
            progress.update(task, total=total, completed=finished)

        with progress:
            card, summary = run_evaluation(
                store, suite, policy, name, quick=quick, concurrency=concurrency, handle_signals=True,
                on_start=on_start, on_finish=lambda done: progress.update(task, completed=done.finished),
            )
    except (SuiteError, ConfigError) as exc:
        raise _fail(str(exc))
    except (LeagueError, StoreError) as exc:
        raise _fail(f"suite {suite_name}: {exc}")
    if summary.interrupted or not card["complete"]:
        flags = redact(f"--policy {policy!r} --suite {suite_name}" + (" --quick" if quick else "") + (f" --db {db}" if db else ""))
        # a --db URL may carry a password: redacted (the user retypes it)
        console.print(redact(f"interrupted: {card['matches']['finished']} of {card['matches']['planned']} matches stored; resume with: arena eval suite {flags}"),
                      soft_wrap=True, markup=False)
        raise typer.Exit(code=130)
    print_card(card)
    if json_path:
        from evaluation.card_files import write_json

        write_json(card, json_path)
        console.print(f"card written to {json_path}")
    if markdown_path:
        from evaluation.card_files import write_markdown

        image = write_markdown(card, markdown_path)
        console.print(f"markdown written to {markdown_path} (plot {image})")


def _pct(value: Optional[float]) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def print_card(card: dict[str, Any]) -> None:
    """The card as rich tables: one row per game and overall."""
    references = sorted({ref for game in card["games"] for ref in game["vs"]})
    table = Table(
        title=f"{card['policy']} on {card['suite']}{' (quick)' if card['quick'] else ''}", title_justify="left", box=box.SIMPLE_HEAD,
        caption="score: wins + draws/2 over games against the references; vs: W/D/L; invalid: rejected attempts; s: median move latency",
        caption_justify="left",
    )
    table.add_column("game", overflow="fold", min_width=10)
    for column in ("score", "95% CI", *(f"vs {r}" for r in references), "invalid", "tokens", "s"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in [*card["games"], {**card["overall"], "game": "overall"}]:
        vs = [f"{v['wins']}/{v['draws']}/{v['losses']}" if (v := row["vs"].get(r)) else "-" for r in references]
        latency = "-" if row["median_latency_s"] is None else f"{row['median_latency_s']:.3f}"
        table.add_row(row["game"], _pct(row["score"]), f"{_pct(row['score_lo'])}..{_pct(row['score_hi'])}", *vs,
                      _pct(row["invalid_rate"]), str(row["prompt_tokens"] + row["completion_tokens"]), latency)
    console.print(table)
    rating = card["rating"]
    if rating:
        anchors = ", ".join(f"{k} {v:.0f}" for k, v in card["anchors"].items())
        console.print(f"anchored rating {rating['rating']:.0f} (95% CI {rating['lo']:.0f} .. {rating['hi']:.0f}) on the {card['suite']} scale; anchors: {anchors}", soft_wrap=True)
    else:
        console.print(f"no anchored rating: {card['suite']} has no anchors yet", soft_wrap=True)


def register(eval_app: typer.Typer) -> None:
    eval_app.command("suites")(suites_command)
    eval_app.command("suite")(suite_command)
