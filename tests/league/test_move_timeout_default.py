"""Every league has a move deadline unless its file turns it off (issue 56, finding 4): the default
is documented, `null` means none, zero or negative is refused in one line, and the leagues that
`arena eval` and `arena ablate` build get the same default. `arena play` refuses a non-positive
`--move-timeout` the same way."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from evaluation.ablation_plan import parse_plan
from evaluation.suites import evaluation_league, load_suite
from league.config import DEFAULT_MOVE_TIMEOUT_S, ConfigError, parse_config
from llm_arena_cli.app import app

BASE = {"name": "t", "games": [{"id": "tictactoe"}], "policies": ["bot", "random"]}


def test_a_league_has_the_default_deadline_unless_its_file_says_otherwise() -> None:
    assert DEFAULT_MOVE_TIMEOUT_S == 120.0  # the value docs/league.md states
    assert parse_config(BASE).move_timeout == DEFAULT_MOVE_TIMEOUT_S
    assert parse_config({**BASE, "move_timeout": 3600}).move_timeout == 3600
    assert parse_config({**BASE, "move_timeout": None}).move_timeout is None  # `move_timeout: null`: no limit, asked for


@pytest.mark.parametrize("value", [0, -1])
def test_a_non_positive_deadline_is_refused_in_one_line(value: float) -> None:
    with pytest.raises(ConfigError) as refused:
        parse_config({**BASE, "move_timeout": value}, "league.yaml")
    assert str(refused.value) == "league.yaml: move_timeout: Input should be greater than 0"


def test_eval_and_ablate_leagues_get_the_same_default() -> None:
    assert evaluation_league(load_suite("core-v1"), "random", "x", quick=True).move_timeout == DEFAULT_MOVE_TIMEOUT_S
    plan = parse_plan({"baseline": "base=random", "variants": {"b": "bot"}, "games": "tictactoe", "pairs": 1}, "t")
    assert plan.move_timeout == DEFAULT_MOVE_TIMEOUT_S and plan.league_config().move_timeout == DEFAULT_MOVE_TIMEOUT_S
    off = parse_plan({"baseline": "base=random", "games": "tictactoe", "pairs": 1, "move_timeout": None}, "t")
    assert off.league_config().move_timeout is None


@pytest.mark.parametrize("value", ["0", "-2"])
def test_arena_play_refuses_a_non_positive_move_timeout(value: str) -> None:
    result = CliRunner().invoke(app, ["play", "tictactoe", "-p", "bot", "-p", "random", "--move-timeout", value, "-q"])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: --move-timeout must be a positive number of seconds, got {float(value):g}"]
