"""The columns of `arena leaderboard`, in three views that each answer one question in 80 columns.

Why views, not one wide table: ratings with their intervals, results, error rates, tokens, cost and
time are 17 columns, far wider than a terminal; squeezed into 80 columns every number would be cut.
So `standings` (the default) answers "how strong, and is that strength real?": the rating beside
its interval, games, W/D/L, and the invalid and forfeit rates, kept beside the rating because a
rating earned while opponents forfeit is an error-survival confound a reader must see at once.
`moves` answers "what does a move cost?": tokens per move (prompt, reasoning, answer), dollars per
move and in total, the median move time. `all` is every column in one table, for wide terminals
and files. Numbers are never cut: the policy column takes what the numbers leave and folds a long
name onto more lines (a truncated spec could hide the harness that tells two rows apart).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from rich import box
from rich.table import Table

from league.move_stats import DEFINITIONS, MOVE_DEFINITION, UNKNOWN, MoveStats, seconds_text, usd_text
from league.rating_display import estimate, has_interval

VIEWS = ("standings", "moves", "all")
MIN_POLICY_WIDTH = 10
GAP = 2  # characters between two columns (collapsed padding, no rules)


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Any, MoveStats], str]  # (rated row, the policy's move stats) -> text
    definition: str = ""  # key of league.move_stats.DEFINITIONS, printed under the table


def _pct(value: float | None) -> str:
    return UNKNOWN if value is None else f"{100.0 * value:.1f}%"


def _count(value: float | None) -> str:
    return UNKNOWN if value is None else f"{value:,.0f}"


def _rating_columns(by: str) -> list[Column]:
    """Each number beside the interval of that same number (league/rating_display.py)."""
    def interval(row: Any, _s: MoveStats) -> str:
        return f"{row.lo:.1f} .. {row.hi:.1f}" if has_interval(row.lo, row.hi) else "not computed"

    def shown(row: Any, _s: MoveStats) -> str:
        return f"{estimate(by, row.rating, row.lo, row.hi):.1f}"

    if by == "trueskill":
        return [Column("mu", shown), Column("95% CI\nof mu", interval), Column("mu - 3\nsigma", lambda r, _s: f"{r.rating:.1f}")]
    if by == "bt":
        return [Column("rating", shown), Column("95% CI", interval)]
    return [Column("rating", shown)]


def _score(row: Any, _s: MoveStats) -> str:
    return f"{(row.wins + 0.5 * row.draws) / row.games * 100:.0f}" if row.games else UNKNOWN


RESULTS = [Column("games", lambda r, _s: str(r.games)), Column("W/D/L", lambda r, _s: f"{r.wins}/{r.draws}/{r.losses}")]
SCORE = Column("score %", _score)
ERRORS = [
    Column("invalid", lambda _r, s: _pct(s.invalid_rate), "invalid_rate"),
    Column("forfeit", lambda _r, s: _pct(s.forfeit_rate), "forfeit_rate"),
]
TOKENS = [
    Column("prompt", lambda _r, s: _count(s.prompt_tokens_per_move), "prompt_tokens_per_move"),
    Column("reasoning", lambda _r, s: _count(s.reasoning_tokens_per_move), "reasoning_tokens_per_move"),
    Column("answer", lambda _r, s: _count(s.answer_tokens_per_move), "answer_tokens_per_move"),
]
GENERATED = Column("generated", lambda _r, s: _count(s.completion_tokens_per_move), "completion_tokens_per_move")
COST_AND_TIME = [
    Column("$/move", lambda _r, s: usd_text(s.cost_per_move_usd), "cost_per_move_usd"),
    Column("$ total", lambda _r, s: usd_text(s.cost_usd), "cost_usd"),
    Column("median s", lambda _r, s: seconds_text(s.median_move_s), "median_move_s"),
]


def view_columns(view: str, by: str) -> list[Column]:
    """The columns after rank and policy."""
    if view == "standings":
        return [*_rating_columns(by), *RESULTS, *ERRORS]
    if view == "moves":
        return [*TOKENS, *COST_AND_TIME]
    return [*_rating_columns(by), *RESULTS, SCORE, *ERRORS, *TOKENS, GENERATED, *COST_AND_TIME]


def board_table(title: str, rows: list[Any], stats: dict[str, MoveStats], view: str, by: str, width: int) -> tuple[Table, int]:
    """The table of `view` for a terminal `width` columns wide, and the width to print it at:
    `width`, or for `all` as wide as its numbers and names need (cut, it would be unreadable)."""
    columns = view_columns(view, by)
    cells = [
        [str(row.rank), row.policy, *(c.cell(row, stats.get(row.policy) or MoveStats(row.policy)) for c in columns)]
        for row in rows
    ]
    headers = ["rank", "policy", *(c.header for c in columns)]
    widths = [max([*map(len, h.split("\n")), *(len(line[i]) for line in cells)]) for i, h in enumerate(headers)]
    natural = sum(widths) + GAP * (len(headers) - 1)
    if view == "all":
        width = max(width, natural)
    policy_width = max(MIN_POLICY_WIDTH, width - natural + widths[1])
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("rank", justify="right", no_wrap=True)
    table.add_column("policy", justify="left", overflow="fold", max_width=policy_width)
    for column in columns:
        table.add_column(column.header, justify="right", no_wrap=True)
    for line in cells:
        table.add_row(*line)
    return table, width


def column_notes(view: str, stats: dict[str, MoveStats]) -> list[str]:
    """What each per-move column of the view means, one line each (the definitions the docs and
    the web show), and a pointer where old turns leave the reasoning split unknown."""
    columns = view_columns(view, "elo")
    notes = [MOVE_DEFINITION] + [f"{c.header}: {DEFINITIONS[c.definition]}" for c in columns if c.definition]
    unsplit = any(s.completion_moves > s.reasoning_moves for s in stats.values())
    if view == "moves" and unsplit:
        notes.append(f"{UNKNOWN} in reasoning or answer: turns stored before reasoning was counted; "
                     "their generated tokens per move are in --columns all")
    return notes
