"""The league store (SQLAlchemy 2.x): the only writer of the database.

Crash safety comes from two rules:
1. A pairing is written as a `scheduled` match before it is played, so a restarted league knows
   exactly what was handed out (same key, seats and seed) and replays what never finished.
2. A finished match and all its turns are written in ONE transaction, guarded by the match's
   status, so a kill at any moment leaves either nothing or the whole match, and finishing the
   same key twice is a no-op.
Ratings are never stored as truth: snapshots are derived from the finished-match log.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from typing import Any, Iterable, Sequence

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship, sessionmaker

from arena.match import MatchRecord, TurnRecord
from league.results import GameResult

DEFAULT_DB = "sqlite:///arena.db"
_SECRET_KEY = re.compile(r"(key|token|secret|password)", re.IGNORECASE)


def default_db_url() -> str:
    return os.environ.get("ARENA_DB", DEFAULT_DB)


def _now() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class PolicyRow(Base):
    __tablename__ = "policies"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    spec: Mapped[str] = mapped_column(String(500))
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class LeagueRow(Base):
    __tablename__ = "leagues"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    config: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class MatchRow(Base):
    __tablename__ = "matches"
    __table_args__ = (UniqueConstraint("league_id", "key", name="uq_match_key"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    league_id: Mapped[int] = mapped_column(ForeignKey("leagues.id"), index=True)
    key: Mapped[str] = mapped_column(String(300))
    game_id: Mapped[str] = mapped_column(String(200), index=True)
    seed: Mapped[int] = mapped_column(Integer)
    seats: Mapped[list] = mapped_column(JSON)  # policy names by seat
    status: Mapped[str] = mapped_column(String(20), default="scheduled", index=True)  # scheduled | finished | aborted
    outcome: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    reason: Mapped[str] = mapped_column(Text, default="")
    scheduled_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True, index=True)
    duration_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    turns: Mapped[list["TurnRow"]] = relationship(back_populates="match", order_by="TurnRow.index", cascade="all, delete-orphan")


class TurnRow(Base):
    __tablename__ = "turns"
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    player: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(String(200))
    turn: Mapped[int] = mapped_column(Integer)
    attempt: Mapped[int] = mapped_column(Integer)
    observation: Mapped[str] = mapped_column(Text)
    legal_moves: Mapped[list | None] = mapped_column(JSON, nullable=True)
    raw: Mapped[str] = mapped_column(Text)
    action: Mapped[str | None] = mapped_column(Text, nullable=True)
    valid: Mapped[bool] = mapped_column(Boolean)
    feedback: Mapped[str] = mapped_column(Text, default="")
    penalty: Mapped[str | None] = mapped_column(String(40), nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    cost_usd: Mapped[float | None] = mapped_column(Float, nullable=True)
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    match: Mapped[MatchRow] = relationship(back_populates="turns")


class RatingSnapshotRow(Base):
    __tablename__ = "rating_snapshots"
    id: Mapped[int] = mapped_column(primary_key=True)
    league_id: Mapped[int] = mapped_column(ForeignKey("leagues.id"), index=True)
    game_id: Mapped[str] = mapped_column(String(200), default="")  # "" = all games
    system: Mapped[str] = mapped_column(String(20))
    after_matches: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(String(200))
    rating: Mapped[float] = mapped_column(Float)
    lo: Mapped[float] = mapped_column(Float)
    hi: Mapped[float] = mapped_column(Float)
    rank: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


def scrub(meta: dict[str, Any]) -> dict[str, Any]:
    """Drop anything that looks like a credential before it reaches the database."""
    return {k: v for k, v in meta.items() if not _SECRET_KEY.search(str(k))}


class Store:
    """Open with a SQLAlchemy URL: sqlite:///path.db (default) or postgresql+psycopg://..."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_db_url()
        self.engine = _make_engine(self.url)
        Base.metadata.create_all(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def session(self) -> Session:
        return self._sessions()

    def close(self) -> None:
        self.engine.dispose()

    # ---- leagues and policies -------------------------------------------------------------------
    def league_id(self, name: str, config: dict[str, Any] | None = None) -> int:
        with self.session() as s, s.begin():
            row = s.scalar(select(LeagueRow).where(LeagueRow.name == name))
            if row is None:
                row = LeagueRow(name=name, config=config or {})
                s.add(row)
                s.flush()
            return row.id

    def league_names(self) -> list[str]:
        with self.session() as s:
            return list(s.scalars(select(LeagueRow.name).order_by(LeagueRow.id)))

    def upsert_policy(self, name: str, spec: str, meta: dict[str, Any] | None = None) -> None:
        with self.session() as s, s.begin():
            row = s.scalar(select(PolicyRow).where(PolicyRow.name == name))
            if row is None:
                s.add(PolicyRow(name=name, spec=spec, meta=scrub(meta or {})))
            else:
                row.spec, row.meta = spec, scrub(meta or row.meta)

    def policies(self) -> list[PolicyRow]:
        with self.session() as s:
            return list(s.scalars(select(PolicyRow).order_by(PolicyRow.name)))

    def remove_policy(self, name: str) -> bool:
        with self.session() as s, s.begin():
            row = s.scalar(select(PolicyRow).where(PolicyRow.name == name))
            if row is None:
                return False
            s.delete(row)
            return True

    # ---- matches ---------------------------------------------------------------------------------
    def schedule(self, league_id: int, pairings: Iterable[Any]) -> None:
        """Persist handed-out pairings (key, game_id, seats, seed); existing keys are left alone."""
        with self.session() as s, s.begin():
            existing = set(s.scalars(select(MatchRow.key).where(MatchRow.league_id == league_id)))
            for p in pairings:
                if p.key not in existing:
                    s.add(MatchRow(league_id=league_id, key=p.key, game_id=p.game_id, seats=list(p.seats), seed=p.seed))

    def unfinished(self, league_id: int) -> list[MatchRow]:
        with self.session() as s:
            return list(s.scalars(select(MatchRow).where(MatchRow.league_id == league_id, MatchRow.status == "scheduled").order_by(MatchRow.id)))

    def count(self, league_id: int, status: str | None = None) -> int:
        with self.session() as s:
            query = select(func.count(MatchRow.id)).where(MatchRow.league_id == league_id)
            if status:
                query = query.where(MatchRow.status == status)
            return int(s.scalar(query) or 0)

    def finish(self, league_id: int, key: str, record: MatchRecord) -> bool:
        """Write the result and every turn in one transaction. False if the key was already
        finished (a duplicate writer), so nothing is ever counted twice."""
        status = "finished" if record.outcome is not None else "aborted"
        with self.session() as s, s.begin():
            done = s.execute(
                update(MatchRow)
                .where(MatchRow.league_id == league_id, MatchRow.key == key, MatchRow.status == "scheduled")
                .values(
                    status=status,
                    outcome=record.outcome,
                    reason=(record.outcome or {}).get("reason", record.status),
                    finished_at=_now(),
                    duration_s=record.duration_s,
                )
            )
            if done.rowcount != 1:
                return False
            match_id = s.scalar(select(MatchRow.id).where(MatchRow.league_id == league_id, MatchRow.key == key))
            s.add_all(TurnRow(match_id=match_id, **_turn_columns(t)) for t in record.turns)
        return True

    def results(self, league_id: int | None = None, game: str | None = None) -> list[GameResult]:
        """Finished matches in the order they finished: the log every rating is a function of."""
        with self.session() as s:
            query = select(MatchRow).where(MatchRow.status == "finished")
            if league_id is not None:
                query = query.where(MatchRow.league_id == league_id)
            if game:
                query = query.where(MatchRow.game_id == game)
            rows = s.scalars(query.order_by(MatchRow.finished_at, MatchRow.id))
            return [GameResult(str(r.id), r.game_id, tuple(r.seats), tuple(r.outcome["ranks"])) for r in rows]

    def match_record(self, match_id: int) -> MatchRecord:
        with self.session() as s:
            row = s.get(MatchRow, match_id)
            if row is None:
                raise KeyError(f"no match {match_id}")
            turns = [TurnRecord(**{c: getattr(t, c) for c in _TURN_FIELDS}) for t in row.turns]
            return MatchRecord(
                match_id=str(row.id), game_id=row.game_id, num_players=len(row.seats), seed=row.seed,
                policies=list(row.seats), specs=[], turns=turns, outcome=row.outcome, status=row.status,
                finished_at=row.finished_at.isoformat() if row.finished_at else "", duration_s=row.duration_s or 0.0,
            )

    def match_ids(self, league_id: int | None = None) -> list[int]:
        with self.session() as s:
            query = select(MatchRow.id).where(MatchRow.status == "finished")
            if league_id is not None:
                query = query.where(MatchRow.league_id == league_id)
            return list(s.scalars(query.order_by(MatchRow.finished_at, MatchRow.id)))

    # ---- rating snapshots ---------------------------------------------------------------------------
    def replace_snapshots(self, league_id: int, rows: Sequence[RatingSnapshotRow]) -> None:
        with self.session() as s, s.begin():
            s.query(RatingSnapshotRow).filter(RatingSnapshotRow.league_id == league_id).delete()
            s.add_all(rows)


_TURN_FIELDS = tuple(TurnRecord.__dataclass_fields__)


def _turn_columns(turn: TurnRecord) -> dict[str, Any]:
    data = {name: getattr(turn, name) for name in _TURN_FIELDS}
    data["meta"] = json.loads(json.dumps(data["meta"], default=str))
    return data


def _make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection, _record):  # noqa: ANN001
            # WAL lets readers (the web) run beside the writer; busy_timeout makes several
            # league processes wait for each other instead of failing.
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.execute("PRAGMA synchronous=FULL")  # a committed match survives power loss
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)
