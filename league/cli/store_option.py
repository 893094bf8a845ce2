"""The `--db` option every league command takes, and opening the store it names: a URL that cannot
be used, or a store a read-only command would have to create, is one line, never a traceback."""

from __future__ import annotations

from typing import Any, Optional

from arena.user_errors import UsageError, fail

DB_HELP = "SQLAlchemy URL of the league store, e.g. sqlite:///arena.db or postgresql+psycopg://user@host/db (default: $ARENA_DB, else sqlite:///arena.db)."


def open_store(db: Optional[str], *, must_exist: bool = False) -> Any:
    """The league store at `db`. Commands that only read pass `must_exist`: opening a Store creates
    the database, so a mistyped URL would otherwise read as an empty league and exit 0."""
    from league.db import default_db_url
    from league.store import Store, shown_url, store_exists

    try:
        if must_exist and not store_exists(db):
            shown = shown_url(db or default_db_url())
            raise fail(f"no league store at {shown} (check --db; `arena league run CONFIG --db {shown}` starts one)")
        return Store(db)
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - a bad URL or an unreachable server is one line
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        raise fail(f"cannot open the league store {shown_url(db) if db else ''}: {type(exc).__name__}: {detail}")


def league_id_of(store: Any, league: Optional[str]) -> Optional[int]:
    """The id of the league named `league` (None for every league), or one line naming the leagues there are."""
    if league is None:
        return None
    league_id = store.league_id(league)
    if league_id is None:
        raise fail(f"no league named {league!r} in {store._safe_url()} (leagues: {', '.join(store.league_names()) or 'none'})")
    return league_id
