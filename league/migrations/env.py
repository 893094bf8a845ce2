"""Alembic environment for the league store, configured in code (no alembic.ini).

`league.db.upgrade_to_head` passes an open connection in `config.attributes["connection"]`;
without one (e.g. `alembic -x url=... upgrade head` by hand) the URL comes from `-x url=` or
$ARENA_DB.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import pool

from league.db import Base, default_db_url, make_engine, schema_transaction

config = context.config
target_metadata = Base.metadata


def _configure_and_run(connection) -> None:  # noqa: ANN001
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure_and_run(connection)
        return
    url = context.get_x_argument(as_dictionary=True).get("url") or default_db_url()
    engine = make_engine(url)
    engine.pool = pool.NullPool(engine.pool._creator)  # one-shot: keep no connections around
    with schema_transaction(engine) as connection:
        _configure_and_run(connection)


if context.is_offline_mode():
    raise SystemExit("league migrations run online only: league.db.upgrade_to_head(engine)")
run_migrations_online()
