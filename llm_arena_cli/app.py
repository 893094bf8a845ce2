"""The `arena` command: the composition root above every package it puts together. Each package adds
its own commands through a `register(app)` function (league, evaluation, web, trainer, serve-env,
serve-model), so this file stays about games and single matches.

Errors users can cause (a wrong game id, a bad policy spec, a bad config) are raised as
`arena.user_errors.UsageError` by whichever command meets them; the root group prints one line and exits 2.
"""

from __future__ import annotations

import asyncio
import importlib
import re
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from arena.redaction import install_log_redaction, redact
from arena.user_errors import UsageError, fail

console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)


class _ReportsUsageErrors(TyperGroup):
    """The root command group: a `UsageError` raised by any command, of any package's group,
    becomes one line on stderr and exit code 2."""

    def invoke(self, ctx):  # type: ignore[no-untyped-def]
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            err_console.print(f"error: {redact(exc)}", markup=False, soft_wrap=True)  # redacted again: cheap, and sure
            raise typer.Exit(code=2) from None


app = typer.Typer(
    cls=_ReportsUsageErrors,
    name="arena",
    help="Multi-agent text games for language models: play, league, leaderboard, self-play training.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _global_options(
    verbose: bool = typer.Option(False, "--verbose", help="Show the libraries' own warnings, logs and loading bars (vLLM, torch, transformers); hidden by default."),
) -> None:
    """Runs before every command, before torch or vLLM load (arena/llm/quiet.py says what is hidden)."""
    from arena.llm.quiet import quiet_torch_logs, set_verbose

    set_verbose(verbose)
    quiet_torch_logs()

# Modules that add commands; each defines register(app). Missing ones are skipped.
COMMAND_MODULES = ("league.cli", "web.cli", "trainer.cli", "serve_model.cli", "serve_env.cli", "evaluation.cli")


NAME_MIN_WIDTH = 12  # the longest word of a native game's name ("Negotiation", "Prisoner's")


def _wrappable_name(name: str) -> str:
    """TextArena names are CamelCase ids ("IteratedRockPaperScissors"): spaced into words so a
    narrow column wraps them between words."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name)


@app.command("games")
def games_command(
    all_games: bool = typer.Option(False, "--all", help="Also list TextArena games that cannot run here, with the reason."),
    source: Optional[str] = typer.Option(None, help="Only games from this source: native or textarena."),
) -> None:
    """List the games you can play.

    Example: arena games --all
    """
    from arena.game import player_count_text
    from games.registry import list_games

    # Simultaneous games are starred (with a caption) so the name column keeps room at 80 columns.
    # With --all the TextArena ids take half of 80 columns: the source column goes (the id's
    # "textarena:" prefix says it) and names wrap between words, never inside one.
    caption = "* players choose their moves simultaneously" + ("; textarena: ids come from TextArena" if all_games else "")
    table = Table(title="Games", show_lines=False, caption=caption)
    table.add_column("id", style="bold", no_wrap=True)
    table.add_column("name", overflow="fold", min_width=NAME_MIN_WIDTH)
    table.add_column("players", justify="center", no_wrap=True)
    if not all_games:
        table.add_column("source", no_wrap=True)
    else:
        table.add_column("ok", no_wrap=True)  # the reasons follow the table, one line each
    infos = list_games(include_unavailable=all_games)
    if source:
        infos = [i for i in infos if i.source == source]
    for info in infos:
        players = player_count_text(info.min_players, info.max_players) + ("*" if info.simultaneous else "")
        last = ("yes" if info.available else "no") if all_games else info.source
        row = [info.id, _wrappable_name(info.name), players, last]
        table.add_row(*row)
    console.print(table)
    unavailable = [i for i in infos if not i.available]
    if unavailable:
        console.print("Why some games cannot run here:")
        for info in unavailable:
            console.print(f"  {info.id}: {info.reason}", markup=False)
    console.print(f"{len(infos) - len(unavailable)} playable" + (f", {len(unavailable)} unavailable" if all_games else ""))


@app.command("play")
def play_command(
    game: str = typer.Argument(..., help="Game id, e.g. tictactoe or textarena:ConnectFour-v0."),
    policy: list[str] = typer.Option(..., "--policy", "-p", help="One per seat, in seat order: random, bot, human, local, openai:MODEL, ..."),
    seed: int = typer.Option(0, help="Seed for the game's chance and the scripted policies."),
    save: Optional[Path] = typer.Option(None, help="Write the match record (JSON) here."),
    move_timeout: Optional[float] = typer.Option(None, help="Seconds per move; a policy that is slower loses by the game's rule (default: none, a human may be seated; http: agents keep their own timeout=)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only print the result."),
) -> None:
    """Play one match in the terminal.

    Example: arena play tictactoe -p bot -p random --seed 1 --save match.json
    """
    from arena.match import play_match
    from arena.policy import PolicySpecError, make_policy
    from llm_arena_cli.render import TurnPrinter, print_final_view, print_result
    from games.registry import UnknownGameError, make_game

    # One match: start-up dominates. Measured on 2 cores (docs/experiments/vllm-vs-hf-engine.md, time
    # to first move of `arena play tictactoe -p local -p bot`, median of 3): hf 8.0 s, vLLM 37.6 s; the whole match
    # too (35.5 s vs 51.7 s). So the hf engine is what local policies without engine= get here.
    defaults = {"engine": ("hf", "measured faster to a first move (8 s vs 38 s for vLLM, start-up included)")}

    if move_timeout is not None and not move_timeout > 0:
        raise fail(f"--move-timeout must be a positive number of seconds, got {move_timeout:g}")
    try:
        game_obj = make_game(game, num_players=len(policy))
    except UnknownGameError as exc:
        raise fail(str(exc))
    except Exception as exc:  # wrong player count, unavailable TextArena game, ...
        raise fail(f"{game}: {exc}")
    from llm_arena_cli.spinner import make_with_loading_sign, with_thinking_signs

    try:
        policies = [make_with_loading_sign(console, spec, lambda text: make_policy(text, defaults)) for spec in policy]
    except PolicySpecError as exc:
        raise fail(str(exc))
    if not quiet:
        policies = with_thinking_signs(console, policies, policy)
    has_human = any(p.provider == "human" for p in policies)
    printer = None if quiet else TurnPrinter(console, show_views=not has_human)

    async def run():
        try:
            return await play_match(game_obj, policies, seed, move_timeout=move_timeout, on_turn=printer)
        finally:
            for p in policies:
                await p.close()

    try:
        record = asyncio.run(run())
    except KeyboardInterrupt:  # Ctrl-C, at a human's prompt too: the match ends at once (docs/play.md)
        err_console.print("interrupted; no result", markup=False)
        raise typer.Exit(code=130) from None
    if not quiet:  # the human's own view (hidden cards stay hidden), else seat 0's
        humans = [seat for seat, p in enumerate(policies) if p.provider == "human"]
        print_final_view(console, record, humans[0] if humans else 0)
    print_result(console, record)
    if save:
        record.save(save)
        console.print(f"saved to {save}")


@app.command("replay")
def replay_command(
    path: Path = typer.Argument(..., help="A match record written by `arena play --save`."),
    views: bool = typer.Option(True, help="Show what each player saw before moving."),
) -> None:
    """Print a saved match again, turn by turn.

    Example: arena replay match.json
    """
    import json

    from arena.match import MatchRecord, RecordFormatError
    from llm_arena_cli.render import print_record

    if not path.exists():
        raise fail(f"{path}: no such file")
    try:
        record = MatchRecord.load(path)
    except json.JSONDecodeError as exc:
        raise fail(f"{path}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})")
    except (RecordFormatError, UnicodeDecodeError, OSError) as exc:
        raise fail(f"{path}: {exc}")
    print_record(console, record, show_views=views)


def _register_command_modules() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue  # that package has no commands yet
            raise
        module.register(app)


_register_command_modules()


def main() -> None:
    install_log_redaction()
    app()


if __name__ == "__main__":
    main()
