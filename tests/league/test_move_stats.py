"""The leaderboard's per-move figures (league/move_stats.py) against a store whose turns are known,
on SQLite and PostgreSQL: tokens with reasoning apart, cost, the median move time, the invalid and
forfeit rates; unknown stays None (old-format turns, bots, unpriced calls, a non-number in meta)."""

from collections import Counter

import pytest

from league.move_stats import COLUMNS, DEFINITIONS, MoveStats, _median, move_stats
from tests.league.move_store import EXPECTED, EXPECTED_TICTACTOE, fill, finish_match, turn

# Means and medians of at most four float64 values: a few ulps apart at most, on either database.
TOLERANCE = 1e-12


def _check(stats: MoveStats, expected: dict) -> None:
    columns = stats.columns()
    for name, value in expected.items():
        if value is None or isinstance(value, int):
            assert columns[name] == value, name
        else:
            assert columns[name] == pytest.approx(value, rel=TOLERANCE), name


def test_figures_over_all_games_and_per_game(store):
    fill(store)
    with store.session() as session:
        figures = move_stats(session, store.league_id("lab"))
    assert set(figures) == {"", "tictactoe", "nim"}
    for policy, expected in EXPECTED.items():
        _check(figures[""][policy], expected)
    for policy, expected in EXPECTED_TICTACTOE.items():
        _check(figures["tictactoe"][policy], expected)
    _check(figures["nim"]["thinker"], {"moves": 1, "forfeits": 1, "forfeit_rate": 1.0, "median_move_s": 30.0, "prompt_tokens_per_move": None})


def test_one_game_and_every_league(store):
    fill(store)
    with store.session() as session:
        one_game = move_stats(session, store.league_id("lab"), "nim")
        every_league = move_stats(session)
    assert set(one_game) == {"", "nim"} and one_game[""]["thinker"].columns() == one_game["nim"]["thinker"].columns()
    # "other" adds one forfeited match with a priced, reasoned, 99-second move to the store's figures
    _check(every_league[""]["thinker"], {"moves": 5, "matches": 3, "forfeits": 2, "cost_usd": 5.003, "cost_moves": 3,
                                         "reasoning_moves": 4, "median_move_s": 3.0})


@pytest.mark.parametrize(("stored", "median"), [
    (0.000457, 0.000457), (0.012345, 0.0123), (0.98765, 0.988), (1.23456, 1.23), (12.3456, 12.3), (123.456, 123.0), (1234.56, 1230.0),
])
def test_the_median_reads_move_times_to_three_significant_digits(store, stored, median):
    finish_match(store, "times", "t", "nim", ("slow", "bot"), [1, 2], [turn(0, 0, "slow", latency_s=stored), turn(1, 1, "bot")])
    with store.session() as session:
        assert move_stats(session, store.league_id("times"))[""]["slow"].median_move_s == median  # the same decimal, so the same double


def test_median_of_counted_values():
    assert _median(Counter({3.0: 1, 1.0: 1, 2.0: 1})) == 2.0
    assert _median(Counter({1.0: 2, 5.0: 2})) == 3.0 and _median(Counter({1.0: 3, 5.0: 1})) == 1.0
    assert _median(Counter()) is None


def test_a_policy_without_turns_knows_no_figure():
    assert MoveStats("nobody").columns() == {
        name: (0 if name in ("moves", "failures", "matches", "forfeits", "reasoning_moves", "cost_moves") else None) for name in COLUMNS
    }


def test_every_rate_and_per_move_column_is_defined():
    counts = {"moves", "failures", "matches", "forfeits", "reasoning_moves", "cost_moves"}
    assert set(COLUMNS) - counts == set(DEFINITIONS)
