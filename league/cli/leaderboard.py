"""`arena leaderboard`: ratings with 95% confidence intervals and ranks that respect them, as a
table; `arena league run` prints the same table when a league ends."""

from __future__ import annotations

from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table

from arena.user_errors import fail
from league.cli.store_option import DB_HELP, league_id_of, open_store

console = Console(highlight=False)


def print_leaderboard(store: Any, league_id: Optional[int], by: str, game: Optional[str], bootstrap: int,
                       ci: str = "bootstrap", pooling: str = "games", columns: str = "standings") -> None:
    from league.cli.board_columns import board_table, column_notes
    from league.move_stats import move_stats
    from league.ratings import leaderboard

    results = store.results(league_id, game)
    rows = leaderboard(results, by=by, game=game, bootstrap=bootstrap, ci=ci, pooling=pooling)
    with store.session() as session:
        stats = move_stats(session, league_id, game).get(game or "", {})
    per_move = ", per move" if columns == "moves" else ""
    title = f"Leaderboard: {by}, {game or 'all games'}, {len(results)} matches{per_move}"
    table, width = board_table(title, rows, stats, columns, by, console.width)
    # rich never prints wider than its console: the wide view gets a console of its own width
    (console if width <= console.width else Console(highlight=False, width=width)).print(table)
    if columns == "moves":
        console.print(f"rows and ranks as in the {by} standings (--columns standings)", soft_wrap=True)
    else:
        _print_rating_notes(rows, results, by, bootstrap, ci, pooling)
    for note in column_notes(columns, stats):
        console.print(note, soft_wrap=True, markup=False)


def _print_rating_notes(rows: list, results: list, by: str, bootstrap: int, ci: str, pooling: str) -> None:
    """How the ratings were fitted, why an interval is missing, why a rank is shared."""
    from league.rating_display import has_interval, missing_interval_reason, rank_ties
    from league.results import is_rated

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
    columns: str = typer.Option("standings", "--columns", help="standings (rating, 95% CI, games, W/D/L, invalid and forfeit rates; fits 80 columns), moves (tokens per move: prompt, reasoning, answer; $ per move and in total; median move time) or all (every column in one wide table). Each figure is defined under the table and in docs/league.md."),
) -> None:
    """Ratings with 95% confidence intervals and ranks that respect them.

    Example: arena leaderboard --by bt --game tictactoe --db sqlite:///demo.db
    Example: arena leaderboard --by bt --ci sandwich --pooling matches
    Example: arena leaderboard --columns moves    # tokens (reasoning apart), cost and time per move
    """
    from league.cli.board_columns import VIEWS
    from league.ratings import CI_METHODS, POOLINGS, SYSTEMS

    if by not in SYSTEMS:
        raise fail(f"--by {by!r}: choose one of {', '.join(SYSTEMS)}")
    if ci not in CI_METHODS:
        raise fail(f"--ci {ci!r}: choose one of {', '.join(CI_METHODS)}")
    if pooling not in POOLINGS:
        raise fail(f"--pooling {pooling!r}: choose one of {', '.join(POOLINGS)}")
    if by != "bt" and (ci, pooling) != ("bootstrap", "games"):
        raise fail(f"--ci and --pooling apply to --by bt only (got --by {by})")
    if columns not in VIEWS:
        raise fail(f"--columns {columns!r}: choose one of {', '.join(VIEWS)}")
    store = open_store(db, must_exist=True)
    league_id = league_id_of(store, league)
    if game and game not in {g for g in _games_played(store, league_id)}:
        raise fail(f"--game {game!r}: no finished matches of that game (games: {', '.join(_games_played(store, league_id)) or 'none'})")
    print_leaderboard(store, league_id, by, game, bootstrap, ci, pooling, columns)


def _games_played(store: Any, league_id: Optional[int]) -> list[str]:
    return sorted({r.game_id for r in store.results(league_id)})
