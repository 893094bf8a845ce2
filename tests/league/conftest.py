"""The `store` fixture: a fresh league store on SQLite, and on the PostgreSQL server that
scripts/test.sh (scripts/pg.sh) starts; postgres cases are skipped only when ARENA_TEST_PG_URL
is absent (and fail instead where scripts/test.sh promised the server: tests/services.py).
`sqlite_store` is SQLite only, for tests whose subject is not the database."""

import pytest
from sqlalchemy import create_engine, text

from league.db import Base
from league.store import Store
from tests.services import postgres_url


def reset_postgres(url: str) -> None:
    engine = create_engine(url)
    Base.metadata.drop_all(engine)
    with engine.begin() as connection:
        connection.execute(text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'league.db'}"
        return
    url = postgres_url()
    reset_postgres(url)
    yield url
    reset_postgres(url)


@pytest.fixture
def store(store_url):
    s = Store(store_url)  # migrates the empty database to head
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'league.db'}")
    yield s
    s.close()


def scheduled_keys(config) -> set[str]:
    """The key of every pairing `config`'s schedule hands out, in one go."""
    from league.runner import build_scheduler

    scheduler = build_scheduler(config)
    return {p.key for p in scheduler.next_pairings([], 0, scheduler.total())}
