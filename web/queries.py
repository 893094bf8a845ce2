"""Read queries for the web, in SQL against league/db.py's models.

The store (league/store.py) is the only writer; everything here only reads. Per-policy statistics
are aggregated by the database (one pass over the seats of finished matches for the results, and
league/move_stats.py's passes over the turns for the per-move figures), never by Python loops
over turns, and the standings come from the stored rating snapshots
(league/snapshots.py), so a page never refits a rating model.

Seats and ranks live in JSON columns (`matches.seats`, `matches.outcome.ranks`); unnesting them is
the one dialect-specific piece (SQLite's json_each, PostgreSQL's json_array_elements_text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from arena.redaction import redact, redact_data
from league.db import FINISHED, RUNNING, SCHEDULED, LeagueRow, MatchRow, PolicyRow, RatingSnapshotRow, TurnRow
from league.move_stats import MoveStats, move_stats

RESULTS = ("win", "draw", "loss")
STATUSES = ("finished", "aborted", "running", "scheduled", "abandoned")


@dataclass
class PolicyStats(MoveStats):
    """What one policy did in one scope (a game, or all games): rated results, and the per-move
    figures of league.move_stats (tokens, cost, time, invalid and forfeit rates)."""

    games: int = 0  # rated matches (at least two distinct policies), as the ratings count them
    wins: int = 0
    draws: int = 0
    losses: int = 0
    last_played: datetime | None = None

    def add_results(self, other: "PolicyStats") -> None:
        self.games, self.wins = self.games + other.games, self.wins + other.wins
        self.draws, self.losses = self.draws + other.draws, self.losses + other.losses
        if other.last_played is not None and (self.last_played is None or _aware(other.last_played) > _aware(self.last_played)):
            self.last_played = other.last_played


@dataclass
class Pair:
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def win_rate(self) -> float | None:
        """Draws count half, as in league.ratings.PairStat."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games else None


@dataclass
class Standing:
    policy: str
    rating: float
    lo: float
    hi: float
    rank: int
    games: int
    after_matches: int = 0


@dataclass
class MatchFilter:
    game: str | None = None
    policy: str | None = None
    result: str | None = None  # win | draw | loss, from `policy`'s side (needs `policy`)
    status: str | None = None
    since: datetime | None = None  # finished at or after
    until: datetime | None = None  # finished before
    extra: dict[str, Any] = field(default_factory=dict)


def _aware(value: datetime) -> datetime:
    # SQLite hands back naive datetimes for timezone-aware columns; everything stored is UTC.
    from datetime import timezone

    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def _seat_rows_sql(dialect: str) -> str:
    """One row per seat of every finished match of a league: match, game, policy, rank."""
    if dialect == "postgresql":
        return (
            "SELECT m.id AS match_id, m.game_id AS game_id, s.policy AS policy, "
            "CAST(m.outcome->'ranks'->>(CAST(s.ord AS INTEGER) - 1) AS INTEGER) AS rank, m.finished_at AS finished_at "
            "FROM matches m CROSS JOIN LATERAL json_array_elements_text(m.seats) WITH ORDINALITY AS s(policy, ord) "
            "WHERE m.league_id = :league AND m.status = 'finished'"
        )
    return (
        "SELECT m.id AS match_id, m.game_id AS game_id, s.value AS policy, "
        "CAST(json_extract(m.outcome, '$.ranks[' || s.key || ']') AS INTEGER) AS rank, m.finished_at AS finished_at "
        "FROM matches m, json_each(m.seats) s WHERE m.league_id = :league AND m.status = 'finished'"
    )


def _best_ranks_cte(dialect: str) -> str:
    """`ranked`: each distinct policy of a match at its best rank (self-play seats collapse, as in
    league.results.standings), with the match's top rank, how many policies share it, and how
    many distinct policies played (a match with fewer than two is not rated)."""
    return (
        f"WITH seat AS ({_seat_rows_sql(dialect)}), "
        "best AS (SELECT match_id, game_id, policy, MIN(rank) AS rank, MAX(finished_at) AS finished_at "
        "FROM seat GROUP BY match_id, game_id, policy), "
        "windowed AS (SELECT b.*, MIN(rank) OVER (PARTITION BY match_id) AS top, COUNT(*) OVER (PARTITION BY match_id) AS n FROM best b), "
        "ranked AS (SELECT w.*, SUM(CASE WHEN rank = top THEN 1 ELSE 0 END) OVER (PARTITION BY match_id) AS firsts FROM windowed w) "
    )


# ---- leagues, games, versions -----------------------------------------------------------------
def leagues(session: Session) -> list[LeagueRow]:
    return list(session.scalars(select(LeagueRow).order_by(LeagueRow.id)))


def league_by_name(session: Session, name: str | None) -> LeagueRow | None:
    """The named league, or (no name) the newest one."""
    if name:
        return session.scalar(select(LeagueRow).where(LeagueRow.name == name))
    return session.scalar(select(LeagueRow).order_by(LeagueRow.id.desc()).limit(1))


def league_games(session: Session, league_id: int) -> list[str]:
    query = select(MatchRow.game_id).where(MatchRow.league_id == league_id).group_by(MatchRow.game_id).order_by(MatchRow.game_id)
    return list(session.scalars(query))


def data_version(session: Session, league_id: int) -> tuple[Any, ...]:
    """Changes whenever a match of the league becomes final or its snapshots are rewritten. Both
    lookups are index seeks (ix_matches_league_finished, the snapshot primary key), so it is
    cheap enough to check before serving a cached aggregate."""
    last_finished = session.scalar(select(func.max(MatchRow.finished_at)).where(MatchRow.league_id == league_id))
    last_snapshot = session.scalar(select(func.max(RatingSnapshotRow.id)))
    return (league_id, str(last_finished), last_snapshot)


# ---- standings from snapshots ------------------------------------------------------------------
def latest_standings(session: Session, league_id: int, game: str = "", system: str = "trueskill") -> list[Standing]:
    """The newest snapshot of (league, game, system), best first ("" = all games pooled)."""
    scope = (RatingSnapshotRow.league_id == league_id, RatingSnapshotRow.game_id == game, RatingSnapshotRow.system == system)
    newest = select(func.max(RatingSnapshotRow.after_matches)).where(*scope).scalar_subquery()
    rows = session.execute(
        select(
            RatingSnapshotRow.policy, RatingSnapshotRow.rating, RatingSnapshotRow.lo, RatingSnapshotRow.hi,
            RatingSnapshotRow.rank, RatingSnapshotRow.games, RatingSnapshotRow.after_matches,
        ).where(*scope, RatingSnapshotRow.after_matches == newest).order_by(RatingSnapshotRow.rank, RatingSnapshotRow.rating.desc(), RatingSnapshotRow.policy)
    )
    return [Standing(*row) for row in rows]


def rating_history(session: Session, league_id: int, policy: str, system: str = "trueskill", game: str = "") -> list[Standing]:
    """One point per stored snapshot in which the policy appears, oldest first."""
    rows = session.execute(
        select(
            RatingSnapshotRow.policy, RatingSnapshotRow.rating, RatingSnapshotRow.lo, RatingSnapshotRow.hi,
            RatingSnapshotRow.rank, RatingSnapshotRow.games, RatingSnapshotRow.after_matches,
        ).where(
            RatingSnapshotRow.league_id == league_id, RatingSnapshotRow.game_id == game,
            RatingSnapshotRow.system == system, RatingSnapshotRow.policy == policy,
        ).order_by(RatingSnapshotRow.after_matches)
    )
    return [Standing(*row) for row in rows]


# ---- aggregates (the expensive ones: the app caches them per data version) --------------------------
def policy_stats(session: Session, league_id: int) -> dict[str, dict[str, PolicyStats]]:
    """game -> policy -> stats, plus "" -> policy -> the stats over all games."""
    dialect = _dialect(session)
    by_game = {
        game: {policy: PolicyStats(**vars(figures)) for policy, figures in per_policy.items()}
        for game, per_policy in move_stats(session, league_id).items()
    }
    overall = by_game.setdefault("", {})
    results = session.execute(
        text(
            _best_ranks_cte(dialect)
            + "SELECT game_id, policy, "
            "SUM(CASE WHEN n >= 2 THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN n >= 2 AND rank = top AND firsts = 1 THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN n >= 2 AND rank = top AND firsts > 1 THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN n >= 2 AND rank > top THEN 1 ELSE 0 END), MAX(finished_at) "
            "FROM ranked GROUP BY game_id, policy"
        ),
        {"league": league_id},
    )
    for game, policy, games, wins, draws, losses, last in results:
        row = by_game.setdefault(game, {}).setdefault(policy, PolicyStats(policy))
        row.games, row.wins, row.draws, row.losses = int(games or 0), int(wins or 0), int(draws or 0), int(losses or 0)
        row.last_played = _parse_time(last)
        overall.setdefault(policy, PolicyStats(policy)).add_results(row)
    return by_game


def _parse_time(value: Any) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:  # SQLite returns raw text from a text() query
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def pair_stats(session: Session, league_id: int) -> dict[str, dict[tuple[str, str], Pair]]:
    """game -> (a, b) -> a's record against b (both orders), plus "" for all games; multi-player
    matches count once per pair of distinct policies, decided by their best ranks."""
    dialect = _dialect(session)
    materialized = "MATERIALIZED " if dialect in ("sqlite", "postgresql") else ""
    sql = (
        _best_ranks_cte(dialect).replace("best AS (", f"best AS {materialized}(", 1)
        + "SELECT a.game_id, a.policy, b.policy, "
        "SUM(CASE WHEN a.rank < b.rank THEN 1 ELSE 0 END), SUM(CASE WHEN a.rank = b.rank THEN 1 ELSE 0 END), "
        "SUM(CASE WHEN a.rank > b.rank THEN 1 ELSE 0 END) "
        "FROM best a JOIN best b ON a.match_id = b.match_id AND a.policy <> b.policy GROUP BY a.game_id, a.policy, b.policy"
    )
    table: dict[str, dict[tuple[str, str], Pair]] = {"": {}}
    for game, a, b, wins, draws, losses in session.execute(text(sql), {"league": league_id}):
        pair = Pair(int(wins), int(draws), int(losses))
        table.setdefault(game, {})[(a, b)] = pair
        total = table[""].setdefault((a, b), Pair())
        total.wins, total.draws, total.losses = total.wins + pair.wins, total.draws + pair.draws, total.losses + pair.losses
    return table


# ---- matches ------------------------------------------------------------------------------------
def _policy_ranks_sql(dialect: str, mine: bool) -> str:
    """Scalar SQL: the best rank of :policy (mine) or of everyone else (not mine) in match m."""
    op = "=" if mine else "<>"
    if dialect == "postgresql":
        return (
            "(SELECT MIN(CAST(m.outcome->'ranks'->>(CAST(s.ord AS INTEGER) - 1) AS INTEGER)) "
            f"FROM json_array_elements_text(m.seats) WITH ORDINALITY AS s(policy, ord) WHERE s.policy {op} :policy)"
        )
    return f"(SELECT MIN(CAST(json_extract(m.outcome, '$.ranks[' || s.key || ']') AS INTEGER)) FROM json_each(m.seats) s WHERE s.value {op} :policy)"


def _seated_sql(dialect: str) -> str:
    if dialect == "postgresql":
        return "EXISTS (SELECT 1 FROM json_array_elements_text(m.seats) AS s(policy) WHERE s.policy = :policy)"
    return "EXISTS (SELECT 1 FROM json_each(m.seats) s WHERE s.value = :policy)"


def list_matches(session: Session, league_id: int, where: MatchFilter, page: int = 1, per_page: int = 50, *, count: bool = True) -> tuple[list[dict[str, Any]], int]:
    """(one page of matches, newest first, and how many match the filter in all; -1 unless `count`).
    Newest first walks ix_matches_league_finished backwards, so a page stops early."""
    dialect = _dialect(session)
    clauses = ["m.league_id = :league"]
    params: dict[str, Any] = {"league": league_id}
    if where.game:
        clauses.append("m.game_id = :game")
        params["game"] = where.game
    if where.status:
        clauses.append("m.status = :status")
        params["status"] = where.status
    if where.since:
        clauses.append("m.finished_at >= :since")
        params["since"] = where.since
    if where.until:
        clauses.append("m.finished_at < :until")
        params["until"] = where.until
    if where.policy:
        clauses.append(_seated_sql(dialect))
        params["policy"] = where.policy
        if where.result:
            mine, theirs = _policy_ranks_sql(dialect, True), _policy_ranks_sql(dialect, False)
            op = {"win": "<", "draw": "=", "loss": ">"}[where.result]
            clauses.append(f"m.status = 'finished' AND {mine} {op} {theirs}")
    condition = " AND ".join(clauses)
    total = int(session.execute(text(f"SELECT COUNT(*) FROM matches m WHERE {condition}"), params).scalar() or 0) if count else -1
    params.update(limit=per_page, offset=(page - 1) * per_page)
    # Unfinished matches (no finished_at) come last; SQLite already sorts NULL lowest, and an
    # explicit NULLS LAST there would stop it from walking the index.
    order = "m.finished_at DESC NULLS LAST, m.id DESC" if dialect == "postgresql" else "m.finished_at DESC, m.id DESC"
    ids = [
        row[0]
        for row in session.execute(
            text(f"SELECT m.id FROM matches m WHERE {condition} ORDER BY {order} LIMIT :limit OFFSET :offset"),
            params,
        )
    ]
    if not ids:
        return [], total
    rows = {row.id: row for row in session.scalars(select(MatchRow).where(MatchRow.id.in_(ids)))}
    return [match_summary(rows[i]) for i in ids], total


def match_summary(row: MatchRow) -> dict[str, Any]:
    outcome = row.outcome or {}
    ranks = outcome.get("ranks") or []
    winners = [name for name, rank in zip(row.seats, ranks) if ranks and rank == min(ranks)]
    return {
        "id": row.id, "key": row.key, "game_id": row.game_id, "seats": list(row.seats), "status": row.status,
        "ranks": list(ranks), "scores": list(outcome.get("scores") or []), "reason": redact(row.reason or ""),
        "winners": winners if ranks and len(winners) < len(row.seats) else [],
        "draw": bool(ranks) and len(set(ranks)) == 1,
        "seed": int(row.seed), "attempts": row.attempts, "duration_s": row.duration_s,
        "scheduled_at": row.scheduled_at, "started_at": row.started_at, "finished_at": row.finished_at,
    }


def match_with_turns(session: Session, match_id: int) -> tuple[MatchRow, list[TurnRow]] | None:
    row = session.get(MatchRow, match_id)
    if row is None:
        return None
    turns = list(session.scalars(select(TurnRow).where(TurnRow.match_id == match_id).order_by(TurnRow.index)))
    # Served as stored, but a store written before redaction existed may hold a key in an error.
    session.expunge_all()  # the masked copies below must never be flushed back
    for turn in turns:
        turn.error = redact(turn.error) if turn.error else turn.error
        turn.meta = redact_data(turn.meta) if turn.meta else turn.meta
    return row, turns


def recent_matches_of(session: Session, league_id: int, policy: str, limit: int = 20) -> list[dict[str, Any]]:
    rows, _ = list_matches(session, league_id, MatchFilter(policy=policy), 1, limit, count=False)
    return rows


# ---- policies and live -----------------------------------------------------------------------------
def policy_row(session: Session, name: str) -> PolicyRow | None:
    return session.scalar(select(PolicyRow).where(PolicyRow.name == name))


def status_counts(session: Session, league_id: int) -> dict[str, int]:
    rows = session.execute(select(MatchRow.status, func.count(MatchRow.id)).where(MatchRow.league_id == league_id).group_by(MatchRow.status))
    return {status: int(n) for status, n in rows}


def in_flight(session: Session, league_id: int, limit: int = 100) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(MatchRow).where(MatchRow.league_id == league_id, MatchRow.status == RUNNING).order_by(MatchRow.started_at).limit(limit)
    )
    return [match_summary(row) for row in rows]


def recently_finished(session: Session, league_id: int, limit: int = 10) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(MatchRow)
        .where(MatchRow.league_id == league_id, MatchRow.finished_at.is_not(None))
        .order_by(MatchRow.finished_at.desc(), MatchRow.id.desc())
        .limit(limit)
    )
    return [match_summary(row) for row in rows]


__all__ = [
    "FINISHED", "MatchFilter", "Pair", "PolicyStats", "RESULTS", "SCHEDULED", "STATUSES", "Standing", "data_version",
    "in_flight", "latest_standings", "league_by_name", "league_games", "leagues", "list_matches", "match_summary",
    "match_with_turns", "pair_stats", "policy_row", "policy_stats", "rating_history", "recent_matches_of",
    "recently_finished", "status_counts",
]
