"""`arena eval`: the commands that measure policies rather than play leagues.

- `arena eval suites`, `arena eval suite`: a policy scored on a frozen, versioned suite with an
  anchored rating (evaluation/suites, anchored.py, report_card.py; docs/eval.md);
- `arena eval compare`: two cards side by side, refused across suites, subsets and engines
  (card_comparison.py);
- `arena eval exploitability`: a policy's exact exploitability in Kuhn poker or Leduc Hold'em
  (evaluation/exploitability.py);
- `arena ablate`: variants of a policy against it in seat-swapped pairs, with a null variant and a
  paired permutation test (evaluation/cli/ablate.py).

llm_arena_cli/app.py calls `register(app)`.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.redaction import redact
from arena.user_errors import fail
from evaluation.card_files import percent
from league.cli.store_option import DB_HELP, open_store

console = Console(highlight=False)

eval_app = typer.Typer(
    help="Measure policies: frozen benchmark suites with anchored ratings, exact exploitability in small poker games.",
    no_args_is_help=True,
)

EXACT_GAMES = ("kuhn_poker", "leduc_holdem")
# Seat 0's value at equilibrium, chips per hand: Kuhn's is -1/18 (Kuhn 1950); Leduc's is the value
# of OpenSpiel's CFR+ average policy on leduc_poker after 1,500 iterations (exploitability 1.3e-4):
# -0.085600, the figure the literature quotes.
NASH_VALUE = {"kuhn_poker": -1 / 18, "leduc_holdem": -0.0856}


# ---- arena eval suites / suite --------------------------------------------------------------------
@eval_app.command("suites")
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


@eval_app.command("suite")
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
        store = open_store(db)
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
        raise fail(str(exc))
    except (LeagueError, StoreError) as exc:
        raise fail(f"suite {suite_name}: {exc}")
    if summary.interrupted or not card["complete"]:
        flags = redact(f"--policy {policy!r} --suite {suite_name}" + (" --quick" if quick else "") + (f" --db {db}" if db else ""))
        # a --db URL may carry a password: redacted (the user retypes it)
        console.print(redact(f"interrupted: {card['matches']['finished']} of {card['matches']['planned']} matches stored; resume with: arena eval suite {flags}"),
                      soft_wrap=True, markup=False)
        raise typer.Exit(code=130)
    print_card(card)
    from evaluation.card_files import write_markdown, write_outputs

    for line in write_outputs(card, json_path, markdown_path, write_markdown, "card"):
        console.print(line)


def print_card(card: dict[str, Any]) -> None:
    """The card as rich tables: one row per game and overall."""
    references = sorted({ref for game in card["games"] for ref in game["vs"]})
    table = Table(
        title=f"{card['policy']} on {card['suite']}{' (quick)' if card['quick'] else ''}" + (f", engine {card['engine']}" if card.get("engine") else ""),
        title_justify="left", box=box.SIMPLE_HEAD,
        caption="score: wins + draws/2 over games against the references; vs: W/D/L; invalid: rejected attempts; s: median move latency",
        caption_justify="left",
    )
    table.add_column("game", overflow="fold", min_width=10)
    for column in ("score", "95% CI", *(f"vs {r}" for r in references), "invalid", "tokens", "s"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in [*card["games"], {**card["overall"], "game": "overall"}]:
        vs = [f"{v['wins']}/{v['draws']}/{v['losses']}" if (v := row["vs"].get(r)) else "-" for r in references]
        latency = "-" if row["median_latency_s"] is None else f"{row['median_latency_s']:.3f}"
        table.add_row(row["game"], percent(row["score"]), f"{percent(row['score_lo'])}..{percent(row['score_hi'])}", *vs,
                      percent(row["invalid_rate"]), str(row["prompt_tokens"] + row["completion_tokens"]), latency)
    console.print(table)
    rating = card["rating"]
    if rating:
        anchors = ", ".join(f"{k} {v:.0f}" for k, v in card["anchors"].items())
        console.print(f"anchored rating {rating['rating']:.0f} (95% CI {rating['lo']:.0f} .. {rating['hi']:.0f}) on the {card['suite']} scale; anchors: {anchors}", soft_wrap=True)
    else:
        console.print(f"no anchored rating: {card['suite']} has no anchors yet", soft_wrap=True)


@eval_app.command("compare")
def compare_command(
    first: Path = typer.Argument(..., help="A card written by `arena eval suite --json`."),
    second: Path = typer.Argument(..., help="Another card of the same suite, subset and engine."),
) -> None:
    """Two report cards side by side: their anchored ratings, whether the 95% intervals separate
    them, and each game's score. Cards of different suites, subsets or engines are refused.

    Example: arena eval compare base.json step-40.json
    """
    from evaluation.card_comparison import CardsDoNotCompare, compare_cards, load_card

    try:
        comparison = compare_cards(load_card(first), load_card(second))
    except CardsDoNotCompare as exc:
        raise fail(str(exc))
    a, b = comparison.policies
    table = Table(title=f"{comparison.suite}{' (quick)' if comparison.quick else ''}, engine {comparison.engine or 'none named'}",
                  title_justify="left", box=box.SIMPLE_HEAD)
    table.add_column("", overflow="fold")
    table.add_column(a, justify="right", overflow="fold")
    table.add_column(b, justify="right", overflow="fold")
    rating = lambda r: "-" if r is None else f"{r['rating']:.0f} ({r['lo']:.0f}..{r['hi']:.0f})"  # noqa: E731
    table.add_row("anchored rating (95% CI)", *(rating(r) for r in comparison.ratings))
    for row in comparison.games:
        table.add_row(row.game, *(percent(score) for score in row.scores))
    console.print(table)
    separated = comparison.separated
    if separated is None:
        console.print("no verdict: a card has no anchored rating")
    else:
        console.print("the 95% intervals are apart: the data support a difference in rating" if separated
                      else "the 95% intervals overlap: the data do not rank these two")


# ---- arena eval exploitability ----------------------------------------------------------------------
@eval_app.command("exploitability")
def exploitability_command(
    game: str = typer.Option(..., "--game", "-g", help="kuhn_poker or leduc_holdem (one hand is evaluated)."),
    policy: str = typer.Option(..., "--policy", "-p", help="random, bot, or local/hf:MODEL[+ADAPTER] with mode=choice."),
    as_json: bool = typer.Option(False, "--json", help="Print one line of JSON instead of the table."),
    show_strategy: bool = typer.Option(False, "--strategy", help="Also show the policy's move probabilities at every information set."),
) -> None:
    """Exact exploitability of a policy: what a perfect opponent wins from it, in chips per hand.

    Every information set of one hand is enumerated and the policy is asked for its move
    probabilities at each (an LLM through its engine, in one batch); the best responses follow.
    0 means a Nash equilibrium; the uniform random policy has 0.458 in Kuhn poker.

    Example: arena eval exploitability --game kuhn_poker --policy local,mode=choice,obs=state
    """
    from arena.policy import PolicySpecError, make_policy
    from evaluation.exploitability import EvaluationError, build_tree, chips_against, evaluate, infoset_labels, policy_strategy, uniform_strategy
    from games.registry import make_game

    if game not in EXACT_GAMES:
        raise fail(f"--game: exact evaluation supports {', '.join(EXACT_GAMES)}, not {game!r}")
    try:
        tree = build_tree(lambda: make_game(game, 2, hands=1))
        subject = make_policy(policy)
    except (PolicySpecError, EvaluationError) as exc:
        raise fail(str(exc))
    except Exception as exc:  # a model that cannot load: one line
        raise fail(f"--policy {policy}: {type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}")

    async def strategies() -> tuple[dict, dict]:
        bot = make_policy("bot")
        try:
            return await policy_strategy(tree, subject), await policy_strategy(tree, bot)
        finally:
            await subject.close()

    try:
        strategy, bot_strategy = asyncio.run(strategies())
    except EvaluationError as exc:
        raise fail(str(exc))
    except KeyboardInterrupt:
        raise fail("interrupted; nothing was evaluated") from None
    result = evaluate(tree, strategy, game)
    uniform = uniform_strategy(tree)
    summary = {
        **result.to_dict(),
        "policy": subject.name,
        "chips_vs_uniform": chips_against(tree, strategy, uniform),
        "chips_vs_bot": chips_against(tree, strategy, bot_strategy),
        "uniform_exploitability": evaluate(tree, uniform, game).exploitability,
        "bot_exploitability": evaluate(tree, bot_strategy, game).exploitability,
        "nash_value": NASH_VALUE[game],
    }
    if show_strategy:
        labels = infoset_labels(tree)
        ordered = sorted(strategy, key=lambda key: (key[0], labels[key]))
        summary["strategy"] = [{"player": key[0], "infoset": labels[key], "moves": strategy[key]} for key in ordered]
    if as_json:
        print(json.dumps(summary))
        return
    _print_exploitability(summary)
    if show_strategy:
        _print_strategy(summary["strategy"])


def _print_exploitability(s: dict) -> None:
    table = Table(title=f"{s['policy']} in {s['game']} ({s['infosets']} information sets, chips per hand)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("exploitability (what a best response wins)", f"{s['exploitability']:.4f}")
    table.add_row("best response as seat 0 / seat 1", f"{s['best_response'][0]:+.4f} / {s['best_response'][1]:+.4f}")
    table.add_row("seat 0's value in self-play", f"{s['value']:+.4f}")
    table.add_row("expected chips vs uniform random (seats alternating)", f"{s['chips_vs_uniform']:+.4f}")
    table.add_row("expected chips vs bot (seats alternating)", f"{s['chips_vs_bot']:+.4f}")
    table.add_section()
    table.add_row("reference: Nash equilibrium exploitability / seat 0's value", f"0 / {s['nash_value']:+.4f}")
    table.add_row("reference: uniform random exploitability", f"{s['uniform_exploitability']:.4f}")
    table.add_row("reference: bot exploitability", f"{s['bot_exploitability']:.4f}")
    console.print(table)


def _print_strategy(rows: list[dict]) -> None:
    table = Table(title="move probabilities at each information set")
    table.add_column("player", justify="right")
    table.add_column("information set")
    table.add_column("moves")
    for row in rows:
        moves = "  ".join(f"{move} {p:.3f}" for move, p in row["moves"].items())
        table.add_row(str(row["player"]), row["infoset"], moves)
    console.print(table)


def register(app: typer.Typer) -> None:
    from evaluation.cli.ablate import ablate_command

    app.add_typer(eval_app, name="eval")
    app.command("ablate")(ablate_command)
