"""Every registered game passes the shared conformance checks, at its smallest and largest size."""

import pytest

from games import conformance
from games.registry import native_games


def _native_cases():
    for game_id, cls in native_games().items():
        sizes = sorted({cls.min_players, min(cls.max_players, 6)})
        for n in sizes:
            yield pytest.param(game_id, n, id=f"{game_id}-{n}p")


def _textarena_cases():
    from games import textarena_adapter

    for env_id in textarena_adapter.CONFORMANCE_SAMPLE:
        yield pytest.param(f"textarena:{env_id}", None, id=env_id)


@pytest.mark.parametrize("check", conformance.ALL_CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
@pytest.mark.parametrize("game_id,num_players", list(_native_cases()))
def test_native_game(check, game_id, num_players):
    check(game_id, num_players)


@pytest.mark.slow
@pytest.mark.parametrize("check", conformance.ALL_CHECKS, ids=lambda c: c.__name__.removeprefix("check_"))
@pytest.mark.parametrize("game_id,num_players", list(_textarena_cases()))
def test_textarena_game(check, game_id, num_players):
    check(game_id, num_players)
