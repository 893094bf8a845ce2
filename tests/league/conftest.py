import os

import pytest
from sqlalchemy import text

from league.store import Base, Store


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request, tmp_path):
    """A fresh store on SQLite, and on the PostgreSQL server scripts/test.sh starts."""
    if request.param == "sqlite":
        s = Store(f"sqlite:///{tmp_path / 'league.db'}")
        yield s
        s.close()
        return
    url = os.environ.get("ARENA_TEST_PG_URL")
    if not url:
        pytest.skip("ARENA_TEST_PG_URL not set (scripts/test.sh starts PostgreSQL and sets it)")
    s = Store(url)
    Base.metadata.drop_all(s.engine)
    Base.metadata.create_all(s.engine)
    yield s
    Base.metadata.drop_all(s.engine)
    s.close()
