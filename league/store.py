"""The league store: the only writer of the database (models and engines live in league/db.py).

Crash safety comes from three rules:
1. A pairing is written as a `scheduled` match before it is played, so a restarted league knows
   exactly what was handed out (same key, seats and seed) and replays whatever never finished.
2. A finished match and all its turns are written in ONE transaction, guarded by the match's
   status, so a kill at any moment leaves either nothing or the whole match, and finishing the
   same key twice (two processes, a replay) is a no-op.
3. Ratings are never stored as truth: snapshots are derived from the finished-match log.

Every record passes `finish`, whoever played it (the league runner, serve-env, the play page), so
that is where secrets are kept out at the cause: each turn's text (observation, raw reply, action,
feedback, meta keys and values) and the match's final views and outcome are masked of every
secret the process knows (arena.redaction.known_secret_masker) before they are written; errors,
specs and notes go through the full `redact` rules. Pages and exports read a clean store.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from sqlalchemy import and_, delete, func, insert, inspect, make_url, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from arena.match import MatchRecord, TurnRecord
from arena.redaction import is_secret_name, known_secret_masker, redact, redact_data
from league.db import (
    ABANDONED,
    ABORTED,
    FINAL_STATUSES,
    FINISHED,
    REPLAY_STATUSES,
    RUNNING,
    SCHEDULED,
    Base,
    GameRow,
    LeagueRow,
    MatchRow,
    PolicyRow,
    RatingSnapshotRow,
    TurnRow,
    default_db_url,
    make_engine,
    upgrade_to_head,
    utcnow,
)
from league.results import GameResult

__all__ = [
    "ABANDONED", "ABORTED", "FINISHED", "RUNNING", "SCHEDULED", "Base", "GameRow", "LeagueRow", "MatchRow",
    "PolicyRow", "RatingSnapshotRow", "Store", "StoreError", "TurnRow", "default_db_url", "scrub", "store_exists",
]

class StoreError(ValueError):
    """A request the store refuses (one line, safe to show users)."""


def scrub(value: Any) -> Any:
    """What the store keeps of a config or notes: fields named like secrets dropped, every string
    through arena.redaction (the one place the rules live)."""
    if isinstance(value, dict):  # a key is redacted too: it can be a pasted secret (`--meta sk-...=note`)
        return {
            redact(k): [_scrub_schedule_entry(m) for m in v] if str(k) == "matches" and isinstance(v, list) else scrub(v)
            for k, v in value.items() if not is_secret_name(str(k))
        }
    if isinstance(value, (list, tuple)):
        return [scrub(v) for v in value]
    return redact_data(value)


def _scrub_schedule_entry(entry: Any) -> Any:
    """One entry of a fixed schedule (`matches[]`): its `key` names the pairing, not a secret, so it
    is kept (its value still redacted); every other field is scrubbed as usual."""
    if not isinstance(entry, dict):
        return scrub(entry)
    return {str(k): redact_data(v) if str(k) == "key" else scrub(v) for k, v in entry.items() if str(k) == "key" or not is_secret_name(str(k))}


def _clash(name: str, stored: str, wanted: str) -> str:
    return f"policy {name!r} is already registered with spec {stored!r}, not {wanted!r}; give it another name"


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def shown_url(url: Any) -> str:
    """A store's URL (a string or SQLAlchemy URL) for messages and pages: SQLAlchemy hides the
    password, `redact` the rest (a token in the query string, user-info it did not parse as a
    password). Something that is no URL at all is shown as nothing of itself."""
    try:
        return redact(make_url(url).render_as_string(hide_password=True))
    except Exception:  # noqa: BLE001 - not a URL: show nothing of it
        return "(unparsable URL)"


def store_exists(url: str | None = None) -> bool:
    """Is there a league store at `url` already? Commands that only read check this first, so a
    mistyped URL is reported instead of silently becoming a new empty database (opening a Store
    creates one). SQLite: the file exists; a server: the database holds our tables."""
    url = url or default_db_url()
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return parsed.database in (None, "", ":memory:") or Path(parsed.database).exists()
    engine = make_engine(url)
    try:
        return inspect(engine).has_table(MatchRow.__tablename__)
    finally:
        engine.dispose()


class Store:
    """Open with a SQLAlchemy URL: sqlite:///path.db (default: $ARENA_DB or sqlite:///arena.db)
    or postgresql+psycopg://user@host:port/db. The schema is upgraded to the newest Alembic
    revision on open."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_db_url()
        self.engine = make_engine(self.url)
        upgrade_to_head(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def session(self) -> Session:
        return self._sessions()

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ---- leagues ---------------------------------------------------------------------------------
    def open_league(self, name: str, config: dict[str, Any] | None = None, config_hash: str = "") -> int:
        """The id of league `name`, creating it. A league exists once per store; resuming it with a
        schedule-changing config (a different hash) is refused, because the stored matches were
        handed out by the old schedule."""
        return self.register_league(name, config or {}, config_hash, (), ())

    def register_league(
        self,
        name: str,
        config: dict[str, Any],
        config_hash: str,
        games: Sequence[tuple[str, str, str]],
        policies: Sequence[tuple[str, str, dict[str, Any] | None]],
    ) -> int:
        """Create (or reopen) league `name` with its games (id, name, rules) and policies (name,
        spec, notes) in ONE transaction, and return its id. A refusal (a changed schedule, a
        policy name registered with another spec) rolls everything back: a league that cannot
        start leaves the store exactly as it was, and the fixed file can run under the same name."""
        # Rows are inserted "ignoring duplicates" (PostgreSQL waits for a concurrent writer of the
        # same row to commit, then skips it), so processes starting together never fail on each
        # other's rows; each kind is written in sorted order, so no two registrations deadlock.
        with self.session() as s, s.begin():
            league_id = self._league_in(s, name, config, config_hash)
            for game_id, game_name, rules in sorted(games):
                self._game_in(s, game_id, game_name, rules)
            for policy_name, spec, meta in sorted(policies, key=lambda p: p[0]):
                self._policy_in(s, policy_name, spec, meta)
            return league_id

    def check_policy_names(self, policies: Sequence[tuple[str, str]]) -> None:
        """Refuse (StoreError) a (name, spec) whose name is registered with another spec, without
        writing anything: the league runner asks before it spends time building policies."""
        with self.session() as s:
            for policy_name, spec in policies:
                row = s.scalar(select(PolicyRow).where(PolicyRow.name == policy_name))
                if row is not None and row.spec != redact(spec):
                    raise StoreError(_clash(policy_name, row.spec, redact(spec)))

    def check_league(self, name: str, config_hash: str) -> None:
        """Refuse (StoreError) resuming league `name` with a different schedule; writes nothing."""
        with self.session() as s:
            row = s.scalar(select(LeagueRow).where(LeagueRow.name == name))
            if row is not None and config_hash and row.config_hash and row.config_hash != config_hash:
                raise StoreError(self._schedule_changed(name))

    def _league_in(self, s: Session, name: str, config: dict[str, Any], config_hash: str) -> int:
        s.connection().execute(self._insert_new(LeagueRow, ["name"]), {"name": name, "config": _jsonable(scrub(config)), "config_hash": config_hash, "created_at": utcnow()})
        row = s.scalar(select(LeagueRow).where(LeagueRow.name == name))
        if config_hash and row.config_hash and row.config_hash != config_hash:
            raise StoreError(self._schedule_changed(name))
        return row.id

    def _game_in(self, s: Session, game_id: str, name: str, rules: str) -> None:
        s.connection().execute(self._insert_new(GameRow, ["game_id"]), {"game_id": game_id, "name": name, "rules": rules, "created_at": utcnow()})
        row = s.scalar(select(GameRow).where(GameRow.game_id == game_id))
        if (name and row.name != name) or (rules and row.rules != rules):
            row.name, row.rules = name or row.name, rules or row.rules

    def _insert_new(self, model: type[Base], keys: list[str]) -> Any:
        return _insert_ignoring_duplicates(self.engine.dialect.name, model, keys)

    def _policy_in(self, s: Session, name: str, spec: str, meta: dict[str, Any] | None, display_name: str = "", replace: bool = False) -> None:
        spec, display_name = redact(spec), redact(display_name)  # a spec is shown and exported: never a key in it
        fresh = {"name": name, "spec": spec, "display_name": display_name or name, "meta": _jsonable(scrub(meta or {})), "created_at": utcnow()}
        if s.connection().execute(self._insert_new(PolicyRow, ["name"]), fresh).rowcount == 1:
            return
        row = s.scalar(select(PolicyRow).where(PolicyRow.name == name))
        if row.spec != spec and not replace:
            raise StoreError(_clash(name, row.spec, spec))
        row.spec = spec
        if display_name:
            row.display_name = display_name
        if meta is not None:
            row.meta = _jsonable(scrub(meta))

    def _schedule_changed(self, name: str) -> str:
        return (
            f"league {name!r} already exists in {self._safe_url()} with a different schedule "
            "(games, policies, scheduler, sizes or seed changed); give the league a new `name:` or use another --db"
        )

    def league_id(self, name: str) -> int | None:
        with self.session() as s:
            return s.scalar(select(LeagueRow.id).where(LeagueRow.name == name))

    def league_names(self) -> list[str]:
        with self.session() as s:
            return list(s.scalars(select(LeagueRow.name).order_by(LeagueRow.id)))

    def leagues(self) -> list[LeagueRow]:
        with self.session() as s:
            return list(s.scalars(select(LeagueRow).order_by(LeagueRow.id)))

    # ---- games and policies ---------------------------------------------------------------------
    def upsert_game(self, game_id: str, name: str = "", rules: str = "") -> None:
        with self.session() as s, s.begin():
            self._game_in(s, game_id, name, rules)

    def games(self) -> list[GameRow]:
        with self.session() as s:
            return list(s.scalars(select(GameRow).order_by(GameRow.game_id)))

    def upsert_policy(self, name: str, spec: str, meta: dict[str, Any] | None = None, display_name: str = "", *, replace: bool = False) -> None:
        """Register a policy. A name keeps one spec forever (its matches were played by that spec);
        registering the same name with another spec is refused unless `replace`."""
        with self.session() as s, s.begin():
            self._policy_in(s, name, spec, meta, display_name, replace)

    def policies(self) -> list[PolicyRow]:
        with self.session() as s:
            return list(s.scalars(select(PolicyRow).order_by(PolicyRow.name)))

    def policy(self, name: str) -> PolicyRow | None:
        with self.session() as s:
            return s.scalar(select(PolicyRow).where(PolicyRow.name == name))

    def remove_policy(self, name: str) -> bool:
        """Forget a registered policy. Its matches stay in the log (ratings are of the log)."""
        with self.session() as s, s.begin():
            return s.execute(delete(PolicyRow).where(PolicyRow.name == name)).rowcount == 1

    # ---- matches ---------------------------------------------------------------------------------
    def schedule(self, league_id: int, pairings: Iterable[Any]) -> int:
        """Persist handed-out pairings (key, game_id, seats, seed) in one transaction; keys that
        exist already are left alone. Returns how many were new."""
        return self.launch(league_id, pairings, ())[0]

    def launch(
        self, league_id: int, pairings: Iterable[Any], start: Sequence[str], *, owner: str = "", lease_s: float | None = None,
    ) -> tuple[int, set[str]]:
        """In ONE transaction: persist new pairings as `scheduled` (existing keys are left alone)
        and claim the matches in `start`: mark them `running`, owned by `owner`, with a fresh
        heartbeat. With `lease_s`, a match another runner is playing (running, heartbeat younger
        than `lease_s`) is not claimed. Returns (how many pairings were new, the keys claimed)."""
        rows = [
            {"league_id": league_id, "key": p.key, "game_id": p.game_id, "seats": list(p.seats), "seed": int(p.seed),
             "status": SCHEDULED, "reason": "", "attempts": 0, "scheduled_at": utcnow()}
            for p in pairings
        ]
        if not rows and not start:
            return 0, set()
        new, claimed = 0, set()
        with self.session() as s, s.begin():
            if rows:
                new = _count_new(s, _insert_ignoring_duplicates(self.engine.dialect.name, MatchRow, ["league_id", "key"]), rows)
            if start:
                now = utcnow()
                claimable = MatchRow.status.in_(REPLAY_STATUSES) if lease_s is None else _claimable(now, lease_s)
                s.execute(
                    update(MatchRow)
                    .where(MatchRow.league_id == league_id, MatchRow.key.in_(list(start)), claimable)
                    .values(status=RUNNING, started_at=now, attempts=MatchRow.attempts + 1, owner=owner, heartbeat_at=now)
                )
                # Read back in the same transaction: the rows this claim just wrote (a lost race leaves another owner).
                mine = select(MatchRow.key).where(
                    MatchRow.league_id == league_id, MatchRow.key.in_(list(start)), MatchRow.status == RUNNING,
                    MatchRow.owner == owner, MatchRow.started_at == now,
                )
                claimed = set(s.scalars(mine))
        return new, claimed

    def unfinished(self, league_id: int, lease_s: float | None = None) -> list[MatchRow]:
        """Matches handed out but never finished (scheduled, running, abandoned), oldest first.
        With `lease_s`, only those a runner may claim now (running ones whose lease expired)."""
        with self.session() as s:
            where = MatchRow.status.in_(REPLAY_STATUSES) if lease_s is None else _claimable(utcnow(), lease_s)
            query = select(MatchRow).where(MatchRow.league_id == league_id, where)
            return list(s.scalars(query.order_by(MatchRow.id)))

    def held(self, league_id: int, lease_s: float) -> list[MatchRow]:
        """Running matches whose owner's lease is live: another runner is playing them."""
        with self.session() as s:
            query = select(MatchRow).where(MatchRow.league_id == league_id, MatchRow.status == RUNNING, ~_claimable(utcnow(), lease_s))
            return list(s.scalars(query.order_by(MatchRow.id)))

    def statuses(self, league_id: int, keys: Sequence[str]) -> dict[str, str]:
        with self.session() as s:
            rows = s.execute(select(MatchRow.key, MatchRow.status).where(MatchRow.league_id == league_id, MatchRow.key.in_(list(keys))))
            return {key: status for key, status in rows}

    def heartbeat(self, league_id: int, owner: str) -> int:
        """Renew the lease on every match `owner` is playing; returns how many."""
        with self.session() as s, s.begin():
            done = s.execute(
                update(MatchRow)
                .where(MatchRow.league_id == league_id, MatchRow.owner == owner, MatchRow.status == RUNNING)
                .values(heartbeat_at=utcnow())
            )
            return int(done.rowcount or 0)

    def expire_leases(self, league_id: int, owners: Sequence[str]) -> int:
        """End the leases of runners known to be dead (their process is gone), so their running
        matches are replayed now rather than when the lease would have lapsed."""
        if not owners:
            return 0
        with self.session() as s, s.begin():
            done = s.execute(
                update(MatchRow)
                .where(MatchRow.league_id == league_id, MatchRow.owner.in_(list(owners)), MatchRow.status == RUNNING)
                .values(heartbeat_at=None)
            )
            return int(done.rowcount or 0)

    def start(self, league_id: int, keys: Sequence[str]) -> None:
        """Mark matches as running (in one transaction) just before they are played."""
        self.launch(league_id, (), keys)

    def finish(self, league_id: int, key: str, record: MatchRecord) -> int | None:
        """Write the result and every turn in one transaction. Returns the match's row id, or None
        when the key was already final (a duplicate writer), so nothing is ever counted twice."""
        status = FINISHED if record.outcome is not None else ABORTED
        reason = str((record.outcome or {}).get("reason") or ("" if status == FINISHED else f"aborted: {record.status}"))
        mask = known_secret_masker()  # one snapshot of the secrets for the whole match
        with self.session() as s, s.begin():
            # The guarded UPDATE comes first: it takes the write lock (SQLite) or the row lock
            # (PostgreSQL), so a concurrent writer of the same key waits and then matches no row.
            done = s.execute(
                update(MatchRow)
                .where(MatchRow.league_id == league_id, MatchRow.key == key, MatchRow.status.in_(REPLAY_STATUSES))
                .values(
                    status=status, outcome=_jsonable(mask(record.outcome)), reason=redact(reason)[:2000], finished_at=utcnow(),
                    duration_s=record.duration_s, specs=[redact(spec) for spec in record.specs], game_options=_jsonable(record.game_options),
                    final_views=[mask(view) for view in record.final_views],
                )
            )
            if done.rowcount != 1:
                return None
            match_id = s.scalar(select(MatchRow.id).where(MatchRow.league_id == league_id, MatchRow.key == key))
            s.execute(delete(TurnRow).where(TurnRow.match_id == match_id))  # none expected; never two copies
            if record.turns:
                s.execute(insert(TurnRow), [_turn_columns(match_id, t, mask) for t in record.turns])
        return match_id

    def abandon(self, league_id: int, keys: Sequence[str], reason: str = "interrupted", owner: str | None = None) -> int:
        """Mark unfinished matches abandoned (Ctrl-C); the next run replays them from scratch.
        With `owner`, only matches that runner still holds (not one another runner took over)."""
        if not keys:
            return 0
        where = [MatchRow.league_id == league_id, MatchRow.key.in_(list(keys)), MatchRow.status.in_(REPLAY_STATUSES)]
        if owner is not None:
            where.append(MatchRow.owner == owner)
        with self.session() as s, s.begin():
            done = s.execute(update(MatchRow).where(*where).values(status=ABANDONED, reason=redact(reason)[:2000]))
            return int(done.rowcount or 0)

    def count(self, league_id: int | None = None, status: str | None = None) -> int:
        with self.session() as s:
            query = select(func.count(MatchRow.id))
            if league_id is not None:
                query = query.where(MatchRow.league_id == league_id)
            if status:
                query = query.where(MatchRow.status == status)
            return int(s.scalar(query) or 0)

    def status_counts(self, league_id: int) -> dict[str, int]:
        with self.session() as s:
            rows = s.execute(select(MatchRow.status, func.count(MatchRow.id)).where(MatchRow.league_id == league_id).group_by(MatchRow.status))
            return {status: int(n) for status, n in rows}

    def results(self, league_id: int | None = None, game: str | None = None) -> list[GameResult]:
        """Finished matches in the order they finished: the log every rating is a function of."""
        with self.session() as s:
            query = select(MatchRow.id, MatchRow.game_id, MatchRow.seats, MatchRow.outcome).where(MatchRow.status == FINISHED)
            if league_id is not None:
                query = query.where(MatchRow.league_id == league_id)
            if game:
                query = query.where(MatchRow.game_id == game)
            rows = s.execute(query.order_by(MatchRow.finished_at, MatchRow.id))
            return [GameResult(str(i), g, tuple(seats), tuple(outcome["ranks"])) for i, g, seats, outcome in rows]

    def match_ids(self, league_id: int | None = None, game: str | None = None, statuses: Sequence[str] = FINAL_STATUSES) -> list[int]:
        with self.session() as s:
            query = select(MatchRow.id).where(MatchRow.status.in_(list(statuses)))
            if league_id is not None:
                query = query.where(MatchRow.league_id == league_id)
            if game:
                query = query.where(MatchRow.game_id == game)
            return list(s.scalars(query.order_by(MatchRow.finished_at, MatchRow.id)))

    def match_record(self, match_id: int) -> MatchRecord:
        """A stored match as the MatchRecord the driver wrote (turns in order)."""
        with self.session() as s:
            row = s.get(MatchRow, match_id)
            if row is None:
                raise StoreError(f"no match with id {match_id}")
            turns = s.scalars(select(TurnRow).where(TurnRow.match_id == match_id).order_by(TurnRow.index))
            return _to_record(row, [TurnRecord(**{c: getattr(t, c) for c in _TURN_FIELDS}) for t in turns])

    def iter_records(self, league_id: int | None = None, game: str | None = None) -> Iterator[MatchRecord]:
        """Every final match, oldest first, one at a time (exports of large leagues stay small)."""
        for match_id in self.match_ids(league_id, game):
            yield self.match_record(match_id)

    # ---- rating snapshots ---------------------------------------------------------------------------
    def replace_snapshots(self, league_id: int, rows: Sequence[dict[str, Any]]) -> None:
        """Swap a league's snapshots for freshly derived ones in one transaction."""
        with self.session() as s, s.begin():
            s.execute(delete(RatingSnapshotRow).where(RatingSnapshotRow.league_id == league_id))
            if rows:
                s.execute(insert(RatingSnapshotRow), [{**r, "league_id": league_id, "created_at": utcnow()} for r in rows])

    def add_snapshots(self, league_id: int, rows: Sequence[dict[str, Any]]) -> None:
        """Append snapshots at a new checkpoint (the runner's live curves); an existing checkpoint
        of the same game and system is replaced, so a resumed run never doubles a point."""
        if not rows:
            return
        with self.session() as s, s.begin():
            for game_id, system, after in {(r["game_id"], r["system"], r["after_matches"]) for r in rows}:
                s.execute(
                    delete(RatingSnapshotRow).where(
                        RatingSnapshotRow.league_id == league_id, RatingSnapshotRow.game_id == game_id,
                        RatingSnapshotRow.system == system, RatingSnapshotRow.after_matches == after,
                    )
                )
            s.execute(insert(RatingSnapshotRow), [{**r, "league_id": league_id, "created_at": utcnow()} for r in rows])

    def snapshots(self, league_id: int, game: str = "", system: str = "trueskill") -> list[RatingSnapshotRow]:
        with self.session() as s:
            query = select(RatingSnapshotRow).where(
                RatingSnapshotRow.league_id == league_id, RatingSnapshotRow.game_id == game, RatingSnapshotRow.system == system
            )
            return list(s.scalars(query.order_by(RatingSnapshotRow.after_matches, RatingSnapshotRow.rank, RatingSnapshotRow.policy)))

    def _safe_url(self) -> str:
        """The store's URL for messages and pages (`shown_url`)."""
        return shown_url(self.engine.url)


_TURN_FIELDS = tuple(TurnRecord.__dataclass_fields__)


_MASKED_TURN_TEXT = ("observation", "legal_moves", "raw", "action", "feedback")  # what a policy or a game echoing it wrote


def _turn_columns(match_id: int, turn: TurnRecord, mask: Callable[[Any], Any]) -> dict[str, Any]:
    data = {name: getattr(turn, name) for name in _TURN_FIELDS}
    for name in _MASKED_TURN_TEXT:
        data[name] = mask(data[name])
    data["meta"] = _jsonable(scrub(data["meta"] or {}))  # scrub's `redact` masks the known secrets in keys and values too
    data["error"] = redact(data["error"]) if data["error"] else data["error"]  # a provider's message may echo a key
    data["match_id"] = match_id
    return data


def _to_record(row: MatchRow, turns: list[TurnRecord]) -> MatchRecord:
    # Masked on the way out too: a store written before masking existed may hold secrets.
    mask = known_secret_masker()
    for turn in turns:
        for name in _MASKED_TURN_TEXT:
            setattr(turn, name, mask(getattr(turn, name)))
        turn.error = redact(turn.error) if turn.error else turn.error
        turn.meta = redact_data(turn.meta) if turn.meta else turn.meta
    return MatchRecord(
        match_id=str(row.id), game_id=row.game_id, num_players=len(row.seats), seed=int(row.seed),
        policies=list(row.seats), specs=[redact(spec) for spec in row.specs or []], turns=turns, outcome=mask(row.outcome),
        status="finished" if row.status == FINISHED else row.status,
        started_at=row.started_at.isoformat() if row.started_at else "",
        finished_at=row.finished_at.isoformat() if row.finished_at else "", duration_s=row.duration_s or 0.0,
        final_views=[mask(view) for view in row.final_views or []], game_options=dict(row.game_options or {}),
    )


def _claimable(now: Any, lease_s: float) -> Any:
    """Scheduled or abandoned, or running with an expired lease (no heartbeat for `lease_s`, or
    none at all: rows from before leases existed, or expired by `expire_leases`)."""
    expired = or_(MatchRow.heartbeat_at.is_(None), MatchRow.heartbeat_at < now - timedelta(seconds=lease_s))
    return or_(MatchRow.status.in_((SCHEDULED, ABANDONED)), and_(MatchRow.status == RUNNING, expired))


def _insert_ignoring_duplicates(dialect: str, model: type[Base], keys: list[str]) -> Any:
    if dialect == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as dialect_insert
    elif dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as dialect_insert
    else:
        raise StoreError(f"unsupported database {dialect!r}: use SQLite or PostgreSQL")
    return dialect_insert(model).on_conflict_do_nothing(index_elements=keys)


def _count_new(session: Session, statement: Any, rows: list[dict[str, Any]]) -> int:
    before = session.scalar(select(func.count(MatchRow.id)).where(MatchRow.league_id == rows[0]["league_id"])) or 0
    session.execute(statement, rows)
    after = session.scalar(select(func.count(MatchRow.id)).where(MatchRow.league_id == rows[0]["league_id"])) or 0
    return int(after - before)
