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
        raise fail(f"--by {by!r}: choose one of {', '.join(SYSTEMS)}")
    if ci not in CI_METHODS:
        raise fail(f"--ci {ci!r}: choose one of {', '.join(CI_METHODS)}")
    if pooling not in POOLINGS:
        raise fail(f"--pooling {pooling!r}: choose one of {', '.join(POOLINGS)}")
    if by != "bt" and (ci, pooling) != ("bootstrap", "games"):
        raise fail(f"--ci and --pooling apply to --by bt only (got --by {by})")
    store = open_store(db, must_exist=True)
    league_id = league_id_of(store, league)
    if game and game not in {g for g in _games_played(store, league_id)}:
        raise fail(f"--game {game!r}: no finished matches of that game (games: {', '.join(_games_played(store, league_id)) or 'none'})")
    print_leaderboard(store, league_id, by, game, bootstrap, ci, pooling)


def _games_played(store: Any, league_id: Optional[int]) -> list[str]:
    return sorted({r.game_id for r in store.results(league_id)})
