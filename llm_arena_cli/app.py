"""The `arena` command. Each package adds its own commands through a `register(app)` function
(league, web, trainer, serve-model), so this file stays about games and single matches.

Errors users can cause (a wrong game id, a bad policy spec, a bad config) print one line and exit 2.
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

app = typer.Typer(
    name="arena",
    help="Multi-agent text games for language models: play, league, leaderboard, self-play training.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

# Modules that add commands; each defines register(app). Missing ones are skipped.
COMMAND_MODULES = ("league.cli", "web.cli", "trainer.cli", "arena.llm.cli")


class UsageError(Exception):
    """A user mistake: printed as one line, exit code 2."""


def fail(message: str) -> "typer.Exit":
    err_console.print(f"error: {message}", markup=False, soft_wrap=True)
    return typer.Exit(code=2)


@app.command("games")
def games_command(
    all_games: bool = typer.Option(False, "--all", help="Also list TextArena games that cannot run here, with the reason."),
    source: Optional[str] = typer.Option(None, help="Only games from this source: native or textarena."),
) -> None:
    """List the games you can play.

    Example: arena games --all
    """
    from games.registry import list_games

    # Simultaneous games are starred (with a caption) so the name column keeps room at 80 columns.
    table = Table(title="Games", show_lines=False, caption="* players choose their moves simultaneously")
    table.add_column("id", style="bold", no_wrap=True)
    table.add_column("name", overflow="fold", min_width=None if all_games else 12)
    table.add_column("players", justify="center", no_wrap=True)
    table.add_column("source", no_wrap=True)
    if all_games:
        table.add_column("ok", no_wrap=True)  # the reasons follow the table, one line each
    infos = list_games(include_unavailable=all_games)
    if source:
        infos = [i for i in infos if i.source == source]
    for info in infos:
        players = str(info.min_players) if info.min_players == info.max_players else f"{info.min_players}-{info.max_players}"
        if info.simultaneous:
            players += "*"
        row = [info.id, info.name, players, info.source]
        if all_games:
            row.append("yes" if info.available else "no")
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
    move_timeout: Optional[float] = typer.Option(None, help="Seconds per move; a policy that is slower loses by the game's rule."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only print the result."),
) -> None:
    """Play one match in the terminal.

    Example: arena play tictactoe -p bot -p random --seed 1 --save match.json
    """
    from arena.match import play_match
    from arena.policy import PolicySpecError, make_policy
    from arena.render import TurnPrinter, print_result
    from games.registry import UnknownGameError, make_game

    try:
        game_obj = make_game(game, num_players=len(policy))
    except UnknownGameError as exc:
        raise fail(str(exc))
    except Exception as exc:  # wrong player count, unavailable TextArena game, ...
        raise fail(f"{game}: {exc}")
    try:
        policies = [make_policy(spec) for spec in policy]
    except PolicySpecError as exc:
        raise fail(str(exc))
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
    except KeyboardInterrupt:
        raise fail("interrupted; no result") from None
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
    from arena.match import MatchRecord
    from arena.render import print_record

    if not path.exists():
        raise fail(f"{path}: no such file")
    try:
        record = MatchRecord.load(path)
    except Exception as exc:
        raise fail(f"{path}: not a match record ({type(exc).__name__}: {exc})")
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
    try:
        app()
    except UsageError as exc:
        err_console.print(f"error: {exc}", markup=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
