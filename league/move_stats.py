"""What a policy's moves cost and how often they went wrong: the leaderboard's per-move columns,
aggregated by the database from the stored turns, the same for `arena leaderboard`, `arena export
--kind leaderboard` and the web (its page, JSON and CSV).

Readers compare models by more than their rating: tokens and cost per move (reasoning apart, since
what a move costs depends on how long the model thought), how long a move takes, and how often it
broke the rules, because a rating earned while opponents forfeit hides an "error-survival"
confound. DEFINITIONS below is the one wording of each column; pages, footnotes and docs read it.

A "move" is one attempt: one turn record, one request to the policy (a retry after an invalid
reply is a move of its own). Unknown stays unknown: a figure no attempt reported (a scripted bot's
tokens, a price LiteLLM does not know, reasoning in turns stored before it was counted) is None,
never 0, and each mean is over the attempts that reported that figure.

Everything is one pass of SQL per question, grouped by (game, policy): sums and counts over the
turns, window functions for the median, unnested seats for the matches played. The figures over
all games ("") add the per-game sums and counts; the median over all games is a query of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy import case, func, select, text
from sqlalchemy.orm import Session

from arena.match import LENIENT_PARSES
from league.db import FINAL_STATUSES, FINISHED, MatchRow, TurnRow

# The invalid-move rules that end a player's match as a loss (arena.game.InvalidMoveRule): the
# offender forfeits, or is eliminated from an N-player game. `random_move` plays on, so it is no forfeit.
FORFEIT_PENALTIES = ("forfeit", "eliminate")

MOVE_DEFINITION = ("a move is one attempt: one request to the policy (a retry after an invalid reply is a move of its own); "
                   "– where no attempt reported the figure (a scripted bot's tokens, an unknown price, "
                   "turns stored before reasoning was counted)")
DEFINITIONS: dict[str, str] = {
    "prompt_tokens_per_move": "prompt tokens per move: the mean over its move attempts that reported a count",
    "reasoning_tokens_per_move": "reasoning tokens per move, counted apart from the answer (docs/policies.md, Reasoning models): "
                                 "the mean over attempts that recorded them (turns stored before reasoning was counted have none)",
    "answer_tokens_per_move": "answer tokens per move: generated tokens minus reasoning tokens, the mean over attempts that recorded them",
    "completion_tokens_per_move": "generated tokens per move (reasoning + answer), the mean over attempts that reported a count",
    "cost_per_move_usd": "US dollars per move: the mean over attempts whose cost is known (LiteLLM's price of the model)",
    "cost_usd": "US dollars in total over its attempts whose cost is known; unknown when none is",
    "median_move_s": "median seconds per move attempt, as the match driver timed it (the policy's whole answer, retries included)",
    "invalid_rate": "share of its move attempts that were invalid: rejected by the game, a timeout or provider failure, "
                    "or a move only found by a lenient parse (mention, extracted)",
    "forfeit_rate": "share of its finished matches it lost by the game's invalid-move rule (forfeited or eliminated "
                    "after invalid replies, timeouts or failures)",
}


UNKNOWN = "–"  # how an unknown figure reads, in the terminal and on the pages


def usd_text(value: float | None) -> str:
    """Dollars as they read in a table: cents from $1 up, two significant digits below."""
    if value is None:
        return UNKNOWN
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}" if value >= 1 else f"{value:.2g}"


def seconds_text(value: float | None) -> str:
    """Seconds to three significant digits; a scripted bot's microseconds read as "<0.01"."""
    if value is None:
        return UNKNOWN
    return "<0.01" if value < 0.01 else f"{value:.3g}"


def _mean(total: float, count: int) -> float | None:
    return total / count if count else None


@dataclass
class MoveStats:
    """One policy's move figures in one scope (a game, or "" for all games): sums and counts, with
    the per-move columns as properties."""

    policy: str
    matches: int = 0  # finished matches it sat in (self-play counted once)
    forfeits: int = 0  # of those, matches in which a turn of its ended in a FORFEIT_PENALTIES rule
    moves: int = 0  # move attempts (turn records) in final matches
    invalid: int = 0  # attempts the game rejected, failures, and moves only a lenient parse found
    failures: int = 0  # timeouts and provider failures
    penalties: int = 0  # times the game's invalid-move rule was applied (any rule)
    prompt_tokens: int = 0
    prompt_moves: int = 0  # attempts that reported prompt tokens
    completion_tokens: int = 0
    completion_moves: int = 0
    token_moves: int = 0  # attempts that reported prompt or completion tokens
    reasoning_tokens: int = 0
    reasoning_moves: int = 0  # attempts whose meta records reasoning_tokens
    answer_tokens: int = 0
    answer_moves: int = 0
    cost_total_usd: float = 0.0
    cost_moves: int = 0  # attempts with a known cost
    latency_s: float = 0.0  # summed, for the mean
    median_move_s: float | None = None  # not additive: queried per scope

    @property
    def invalid_rate(self) -> float | None:
        return self.invalid / self.moves if self.moves else None

    @property
    def forfeit_rate(self) -> float | None:
        return self.forfeits / self.matches if self.matches else None

    @property
    def prompt_tokens_per_move(self) -> float | None:
        return _mean(self.prompt_tokens, self.prompt_moves)

    @property
    def completion_tokens_per_move(self) -> float | None:
        return _mean(self.completion_tokens, self.completion_moves)

    @property
    def reasoning_tokens_per_move(self) -> float | None:
        return _mean(self.reasoning_tokens, self.reasoning_moves)

    @property
    def answer_tokens_per_move(self) -> float | None:
        return _mean(self.answer_tokens, self.answer_moves)

    @property
    def avg_tokens(self) -> float | None:
        """Prompt + generated tokens per attempt that reported either (the API's older column)."""
        return _mean(self.prompt_tokens + self.completion_tokens, self.token_moves)

    @property
    def cost_usd(self) -> float | None:
        return self.cost_total_usd if self.cost_moves else None

    @property
    def cost_per_move_usd(self) -> float | None:
        return _mean(self.cost_total_usd, self.cost_moves)

    @property
    def avg_latency_s(self) -> float | None:
        return _mean(self.latency_s, self.moves)

    def columns(self) -> dict[str, Any]:
        """The leaderboard's per-move columns under their stable names (JSON API, CSV, export)."""
        return {
            "moves": self.moves, "invalid_rate": self.invalid_rate, "failures": self.failures, "matches": self.matches, "forfeits": self.forfeits,
            "forfeit_rate": self.forfeit_rate, "prompt_tokens_per_move": self.prompt_tokens_per_move,
            "reasoning_tokens_per_move": self.reasoning_tokens_per_move, "answer_tokens_per_move": self.answer_tokens_per_move,
            "completion_tokens_per_move": self.completion_tokens_per_move, "reasoning_moves": self.reasoning_moves,
            "cost_per_move_usd": self.cost_per_move_usd, "cost_usd": self.cost_usd, "cost_moves": self.cost_moves,
            "median_move_s": self.median_move_s,
        }

    def add(self, other: "MoveStats") -> None:
        """Fold another scope's sums and counts in (the median is not additive: left alone)."""
        for f in fields(MoveStats):
            if f.name not in ("policy", "median_move_s"):
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


COLUMNS = tuple(MoveStats("").columns())  # the stable names, in order


def move_stats(session: Session, league_id: int | None = None, game: str | None = None) -> dict[str, dict[str, MoveStats]]:
    """game -> policy -> MoveStats over the final matches of a league (None: every league), and
    "" -> policy -> the same over all games (with `game`, only that game and "")."""
    by_game: dict[str, dict[str, MoveStats]] = {}

    def stats(game_id: str, policy: str) -> MoveStats:
        return by_game.setdefault(game_id, {}).setdefault(policy, MoveStats(policy))

    for game_id, policy, *sums in session.execute(_turn_sums(session, league_id, game)):
        row = stats(game_id, policy)
        (row.moves, row.invalid, row.failures, row.penalties, row.forfeits, row.prompt_tokens, row.prompt_moves,
         row.completion_tokens, row.completion_moves, row.token_moves, row.reasoning_tokens, row.reasoning_moves,
         row.answer_tokens, row.answer_moves) = (int(v or 0) for v in sums[:14])
        row.cost_total_usd, row.latency_s = float(sums[14] or 0.0), float(sums[15] or 0.0)
        row.cost_moves = int(sums[16] or 0)
    for game_id, policy, matches in _matches_played(session, league_id, game):
        stats(game_id, policy).matches = int(matches)
    for game_id, policy, median in session.execute(_medians(league_id, game, per_game=True)):
        stats(game_id, policy).median_move_s = float(median)
    overall: dict[str, MoveStats] = {}
    for per_policy in by_game.values():
        for policy, row in per_policy.items():
            overall.setdefault(policy, MoveStats(policy)).add(row)
    for policy, median in session.execute(_medians(league_id, game, per_game=False)):
        overall.setdefault(policy, MoveStats(policy)).median_move_s = float(median)
    by_game[""] = overall
    return by_game


def _scope(query: Any, league_id: int | None, game: str | None, statuses: tuple[str, ...] = FINAL_STATUSES) -> Any:
    query = query.join(MatchRow, MatchRow.id == TurnRow.match_id).where(MatchRow.status.in_(statuses))
    if league_id is not None:
        query = query.where(MatchRow.league_id == league_id)
    if game:
        query = query.where(MatchRow.game_id == game)
    return query


def _meta_number(dialect: str, key: str) -> Any:
    """TurnRow.meta[key] where it holds a JSON number, else NULL: a stored value of another type
    (or none, in turns from before the key existed) must count as unknown, never fail the cast."""
    value = TurnRow.meta[key]
    if dialect == "postgresql":
        is_number = func.json_typeof(value) == "number"
    else:
        is_number = func.json_type(TurnRow.meta, f"$.{key}").in_(("integer", "real"))
    return case((is_number, value.as_float()))


def _turn_sums(session: Session, league_id: int | None, game: str | None) -> Any:
    dialect = session.get_bind().dialect.name
    reasoning, answer = _meta_number(dialect, "reasoning_tokens"), _meta_number(dialect, "answer_tokens")
    lenient = TurnRow.meta["parse"].as_string().in_(sorted(LENIENT_PARSES))
    forfeited = case((TurnRow.penalty.in_(FORFEIT_PENALTIES) & (MatchRow.status == FINISHED), TurnRow.match_id))
    query = select(
        MatchRow.game_id, TurnRow.policy, func.count(TurnRow.id),
        func.sum(case((TurnRow.valid.is_(False), 1), (lenient, 1), else_=0)),
        func.count(TurnRow.error), func.count(TurnRow.penalty), func.count(forfeited.distinct()),
        func.sum(TurnRow.prompt_tokens), func.count(TurnRow.prompt_tokens),
        func.sum(TurnRow.completion_tokens), func.count(TurnRow.completion_tokens),
        func.count(func.coalesce(TurnRow.prompt_tokens, TurnRow.completion_tokens)),
        func.sum(reasoning), func.count(reasoning), func.sum(answer), func.count(answer),
        func.sum(TurnRow.cost_usd), func.sum(TurnRow.latency_s), func.count(TurnRow.cost_usd),
    )
    return _scope(query, league_id, game).group_by(MatchRow.game_id, TurnRow.policy)


def _medians(league_id: int | None, game: str | None, *, per_game: bool) -> Any:
    """(game, policy, median latency) per game, or (policy, median) over all games. The median of n
    sorted values is the mean of those at positions i (1-based) with 2i in {n, n+1, n+2}: the
    middle one when n is odd, the middle two when it is even."""
    partition = [MatchRow.game_id, TurnRow.policy] if per_game else [TurnRow.policy]
    ordered = _scope(select(
        *partition, TurnRow.latency_s.label("seconds"),
        func.row_number().over(partition_by=partition, order_by=TurnRow.latency_s).label("i"),
        func.count().over(partition_by=partition).label("n"),
    ), league_id, game).subquery()
    keys = [ordered.c.game_id, ordered.c.policy] if per_game else [ordered.c.policy]
    middle = (2 * ordered.c.i).in_([ordered.c.n, ordered.c.n + 1, ordered.c.n + 2])
    return select(*keys, func.avg(ordered.c.seconds)).where(middle).group_by(*keys)


def _matches_played(session: Session, league_id: int | None, game: str | None) -> Any:
    """(game, policy, finished matches it sat in), seats unnested from the JSON column."""
    if session.get_bind().dialect.name == "postgresql":
        seats = "json_array_elements_text(m.seats) AS s(policy)"
        policy = "s.policy"
    else:
        seats, policy = "json_each(m.seats) s", "s.value"
    where, params = ["m.status = :finished"], {"finished": FINISHED}
    if league_id is not None:
        where.append("m.league_id = :league")
        params["league"] = league_id
    if game:
        where.append("m.game_id = :game")
        params["game"] = game
    sql = (f"SELECT m.game_id, {policy}, COUNT(DISTINCT m.id) FROM matches m CROSS JOIN {seats} "
           f"WHERE {' AND '.join(where)} GROUP BY m.game_id, {policy}")
    return session.execute(text(sql), params)
