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

The database does the work, one pass over the turns: sums and counts grouped by (game, policy,
move time rounded to three significant digits), so the same rows give the additive figures and a
histogram of move times, from which the exact median of the rounded times is read (at most 900
rows per decade of move times per game and policy, whatever the store's size). Forfeits and matches played are two small queries more
(seats unnested from their JSON column). The figures over all games ("") add the per-game sums and
merge the per-game histograms.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields
from typing import Any

from sqlalchemy import Numeric, case, cast, func, select, text
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
    "median_move_s": "median seconds per move attempt, each time rounded to three significant digits, as the match driver "
                     "timed it (the policy's whole answer: every sample and provider retry of that attempt)",
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


def _ratio(total: str, count: str) -> property:
    """A read-only attribute: field `total` / field `count`, None when the count is 0."""
    return property(lambda self: _mean(getattr(self, total), getattr(self, count)), doc=f"{total} / {count}")


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

    # Each rate and mean: a sum over how many attempts (or matches) reported it; None when none did.
    invalid_rate = _ratio("invalid", "moves")
    forfeit_rate = _ratio("forfeits", "matches")
    prompt_tokens_per_move = _ratio("prompt_tokens", "prompt_moves")
    completion_tokens_per_move = _ratio("completion_tokens", "completion_moves")
    reasoning_tokens_per_move = _ratio("reasoning_tokens", "reasoning_moves")
    answer_tokens_per_move = _ratio("answer_tokens", "answer_moves")
    cost_per_move_usd = _ratio("cost_total_usd", "cost_moves")
    avg_latency_s = _ratio("latency_s", "moves")

    @property
    def avg_tokens(self) -> float | None:
        """Prompt + generated tokens per attempt that reported either (the API's older column)."""
        return _mean(self.prompt_tokens + self.completion_tokens, self.token_moves)

    @property
    def cost_usd(self) -> float | None:
        return self.cost_total_usd if self.cost_moves else None

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
    times: dict[tuple[str, str], Counter[float]] = {}  # (game, policy) -> rounded move time -> attempts

    def stats(game_id: str, policy: str) -> MoveStats:
        return by_game.setdefault(game_id, {}).setdefault(policy, MoveStats(policy))

    for game_id, policy, seconds, *sums in session.execute(_turn_sums(session, league_id, game)):
        bucket = MoveStats(policy)
        (bucket.moves, bucket.invalid, bucket.failures, bucket.penalties, bucket.prompt_tokens, bucket.prompt_moves,
         bucket.completion_tokens, bucket.completion_moves, bucket.token_moves, bucket.reasoning_tokens, bucket.reasoning_moves,
         bucket.answer_tokens, bucket.answer_moves, bucket.cost_moves) = (int(v or 0) for v in sums[:14])
        bucket.cost_total_usd, bucket.latency_s = float(sums[14] or 0.0), float(sums[15] or 0.0)
        stats(game_id, policy).add(bucket)
        times.setdefault((game_id, policy), Counter())[float(seconds)] += bucket.moves
    for game_id, policy, forfeits in session.execute(_forfeits(league_id, game)):
        stats(game_id, policy).forfeits = int(forfeits)
    for game_id, policy, matches in _matches_played(session, league_id, game):
        stats(game_id, policy).matches = int(matches)
    overall: dict[str, MoveStats] = {}
    overall_times: dict[str, Counter[float]] = {}
    for game_id, per_policy in by_game.items():
        for policy, row in per_policy.items():
            overall.setdefault(policy, MoveStats(policy)).add(row)
            counts = times.get((game_id, policy), Counter())
            row.median_move_s = _median(counts)
            overall_times.setdefault(policy, Counter()).update(counts)
    for policy, row in overall.items():
        row.median_move_s = _median(overall_times[policy])
    by_game[""] = overall
    return by_game


def _median(counts: Counter[float]) -> float | None:
    """The median of values given as value -> how many times: the middle one of n sorted values,
    or the mean of the middle two when n is even."""
    n = sum(counts.values())
    if not n:
        return None
    positions = ((n + 1) // 2, n // 2 + 1)  # 1-based places of the middle value(s); equal when n is odd
    middle: list[float] = []
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        while len(middle) < 2 and seen >= positions[len(middle)]:
            middle.append(value)
        if len(middle) == 2:
            break
    return (middle[0] + middle[1]) / 2


def _scope(query: Any, league_id: int | None, game: str | None) -> Any:
    query = query.join(MatchRow, MatchRow.id == TurnRow.match_id).where(MatchRow.status.in_(FINAL_STATUSES))
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


def _rounded_seconds() -> Any:
    """A move time rounded to three significant digits (the driver stores microseconds, so below
    1 ms it is kept as stored): the median's histogram has at most 900 values per decade."""
    seconds = cast(TurnRow.latency_s, Numeric)  # PostgreSQL rounds only numerics to a digit count
    return case(
        (TurnRow.latency_s >= 1000.0, func.round(seconds / 10, 0) * 10),
        *((TurnRow.latency_s >= 10.0 ** power, func.round(seconds, 2 - power)) for power in range(2, -4, -1)),
        else_=TurnRow.latency_s,
    )


def _turn_sums(session: Session, league_id: int | None, game: str | None) -> Any:
    """Sums and counts per (game, policy, rounded move time): one pass over the turns gives both
    the additive figures and the histogram the medians are read from."""
    dialect = session.get_bind().dialect.name
    lenient = TurnRow.meta["parse"].as_string().in_(sorted(LENIENT_PARSES))
    turns = _scope(select(
        MatchRow.game_id, TurnRow.policy, _rounded_seconds().label("seconds"), TurnRow.id,
        case((TurnRow.valid.is_(False), 1), (lenient, 1), else_=0).label("invalid"), TurnRow.error, TurnRow.penalty,
        TurnRow.prompt_tokens, TurnRow.completion_tokens, _meta_number(dialect, "reasoning_tokens").label("reasoning"),
        _meta_number(dialect, "answer_tokens").label("answer"), TurnRow.cost_usd, TurnRow.latency_s,
    ), league_id, game).subquery()
    t = turns.c
    return select(
        t.game_id, t.policy, t.seconds, func.count(t.id), func.sum(t.invalid), func.count(t.error), func.count(t.penalty),
        func.sum(t.prompt_tokens), func.count(t.prompt_tokens), func.sum(t.completion_tokens), func.count(t.completion_tokens),
        func.count(func.coalesce(t.prompt_tokens, t.completion_tokens)), func.sum(t.reasoning), func.count(t.reasoning),
        func.sum(t.answer), func.count(t.answer), func.count(t.cost_usd), func.sum(t.cost_usd), func.sum(t.latency_s),
    ).group_by(t.game_id, t.policy, t.seconds)  # grouped by the subquery's column: PostgreSQL matches no bound expression twice


def _forfeits(league_id: int | None, game: str | None) -> Any:
    """(game, policy, finished matches in which a turn of its ended in a FORFEIT_PENALTIES rule)."""
    query = select(MatchRow.game_id, TurnRow.policy, func.count(TurnRow.match_id.distinct()))
    query = _scope(query, league_id, game).where(TurnRow.penalty.in_(FORFEIT_PENALTIES), MatchRow.status == FINISHED)
    return query.group_by(MatchRow.game_id, TurnRow.policy)


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
