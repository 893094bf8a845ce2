"""The league database: SQLAlchemy 2.x models, engines, and the Alembic upgrade run on open.

The schema itself is owned by the Alembic revisions in league/migrations/versions; the models
here must describe the same tables (tests/league/test_store.py checks that they agree).
SQLite is the default (one file, WAL, busy_timeout, so several processes can write); PostgreSQL
is used when the URL says so (`postgresql+psycopg://user@host:port/db`).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
import tempfile
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    text,
)
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

DEFAULT_DB = "sqlite:///arena.db"
MIGRATIONS = Path(__file__).resolve().parent / "migrations"

# Match lifecycle. `finished` and `aborted` (the driver's step cap: no result) are final;
# the others are replayed from scratch, with the same seed, when a league resumes.
SCHEDULED, RUNNING, FINISHED, ABANDONED, ABORTED = "scheduled", "running", "finished", "abandoned", "aborted"
FINAL_STATUSES = (FINISHED, ABORTED)
REPLAY_STATUSES = (SCHEDULED, RUNNING, ABANDONED)


def default_db_url() -> str:
    return os.environ.get("ARENA_DB") or DEFAULT_DB


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Base(DeclarativeBase):
    pass


class PolicyRow(Base):
    """A policy known to the store. `spec` is the string users typed (it cannot hold keys: those
    come from env vars); `meta` is scrubbed of anything key-like before it is written."""

    __tablename__ = "policies"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    spec: Mapped[str] = mapped_column(String(1000))
    display_name: Mapped[str] = mapped_column(String(200), default="")
    meta: Mapped[dict] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class GameRow(Base):
    __tablename__ = "games"
    id: Mapped[int] = mapped_column(primary_key=True)
    game_id: Mapped[str] = mapped_column(String(200), unique=True)
    name: Mapped[str] = mapped_column(String(200), default="")
    rules: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class LeagueRow(Base):
    __tablename__ = "leagues"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    config: Mapped[dict] = mapped_column(JSON, default=dict)
    # sha256 of what decides the schedule (games, policies, scheduler, sizes, seed): a league
    # resumed with a different schedule would mix two tournaments, so it is refused.
    config_hash: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class MatchRow(Base):
    __tablename__ = "matches"
    __table_args__ = (
        UniqueConstraint("league_id", "key", name="uq_matches_league_key"),
        Index("ix_matches_league_status", "league_id", "status"),
        Index("ix_matches_league_finished", "league_id", "finished_at"),
    )
    id: Mapped[int] = mapped_column(primary_key=True)
    league_id: Mapped[int] = mapped_column(ForeignKey("leagues.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(300))
    game_id: Mapped[str] = mapped_column(String(200), index=True)
    seed: Mapped[int] = mapped_column(BigInteger)
    seats: Mapped[list] = mapped_column(JSON)  # policy names by seat
    status: Mapped[str] = mapped_column(String(20), default=SCHEDULED)
    outcome: Mapped[dict | None] = mapped_column(JSON, nullable=True)  # Outcome.to_dict()
    reason: Mapped[str] = mapped_column(Text, default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # times started (replays after crashes)
    scheduled_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    duration_s: Mapped[float | None] = mapped_column(Float, nullable=True)
    specs: Mapped[list | None] = mapped_column(JSON, nullable=True)  # policy specs by seat
    game_options: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    final_views: Mapped[list | None] = mapped_column(JSON, nullable=True)
    # The lease of a running match: which runner plays it and when that runner last said it is
    # alive. Another runner replays a running match only once its lease has expired.
    owner: Mapped[str] = mapped_column(String(200), default="", server_default="")
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class TurnRow(Base):
    """One attempt of one player: every field of arena.match.TurnRecord."""

    __tablename__ = "turns"
    __table_args__ = (UniqueConstraint("match_id", "index", name="uq_turns_match_index"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
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


class RatingSnapshotRow(Base):
    """The leaderboard of one league, game ("" = all games) and rating system after the first
    `after_matches` finished matches of the log. Derived data: `arena league rerate` rebuilds it."""

    __tablename__ = "rating_snapshots"
    __table_args__ = (Index("ix_snapshots_lookup", "league_id", "game_id", "system", "after_matches"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    league_id: Mapped[int] = mapped_column(ForeignKey("leagues.id", ondelete="CASCADE"))
    game_id: Mapped[str] = mapped_column(String(200), default="")
    system: Mapped[str] = mapped_column(String(20))
    after_matches: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(String(200))
    rating: Mapped[float] = mapped_column(Float)
    lo: Mapped[float] = mapped_column(Float)
    hi: Mapped[float] = mapped_column(Float)
    rank: Mapped[int] = mapped_column(Integer)
    games: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


# ---- engines ------------------------------------------------------------------------------------
def make_engine(url: str) -> Engine:
    """An engine with the settings a shared league file needs."""
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_engine(url, connect_args={"timeout": 60})

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
            # WAL lets readers (the web) run beside a writer; busy_timeout makes several league
            # processes queue for the write lock instead of failing; FULL sync makes a
            # committed match survive power loss.
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def _alembic_config(connection: Connection):
    from alembic.config import Config

    config = Config(stdout=sys.stdout)  # programmatic: no alembic.ini; stdout looked up now, not at import
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config(stdout=sys.stdout)
    config.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(config).get_current_head()
    assert head is not None
    return head


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


@contextmanager
def _migration_lock(engine: Engine) -> Iterator[None]:
    """Only one process migrates at a time (two leagues opening a fresh file together)."""
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        # A separate lock file (locking the database file itself would break SQLite's own POSIX
        # locks), kept in the temp folder so it does not litter the user's folder.
        digest = hashlib.sha256(os.path.abspath(url.database).encode()).hexdigest()[:16]
        with open(os.path.join(tempfile.gettempdir(), f"arena-migrate-{digest}.lock"), "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
    elif url.get_backend_name() == "postgresql":
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(727274)"))
            try:
                yield
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(727274)"))
    else:
        yield


def upgrade_to_head(engine: Engine) -> None:
    """Bring the schema to the newest Alembic revision (creating it on an empty database)."""
    head = head_revision()
    if current_revision(engine) == head:
        return
    from alembic import command

    with _migration_lock(engine):
        revision = current_revision(engine)
        if revision == head:  # another process did it while we waited
            return
        if revision is None and _has_league_tables(engine):
            raise ValueError(
                "the database has league tables but no schema version (alembic_version): an interrupted "
                "creation by an older release; move it aside and open again")
        with schema_transaction(engine) as connection:
            command.upgrade(_alembic_config(connection), "head")


def _has_league_tables(engine: Engine) -> bool:
    from sqlalchemy import inspect

    return bool(set(inspect(engine).get_table_names()) & set(Base.metadata.tables))


@contextmanager
def schema_transaction(engine: Engine) -> Iterator[Connection]:
    """A connection whose schema changes commit together or not at all.

    Python's sqlite3 opens a transaction only before INSERT/UPDATE/DELETE, so each CREATE TABLE
    of a migration commits on its own: a process killed half-way left tables without Alembic's
    version row, and every later open failed on "table games already exists". An explicit BEGIN
    makes SQLite's DDL transactional like PostgreSQL's; the commit (or rollback) goes through the
    DB-API connection as usual; on an error, closing the connection rolls it back."""
    with engine.connect() as connection:
        if engine.url.get_backend_name() == "sqlite":
            connection.exec_driver_sql("BEGIN IMMEDIATE")  # IMMEDIATE: take the write lock now
        yield connection
        connection.commit()
