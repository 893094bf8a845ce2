"""TextArena options: only the declared ones reach TextArena, within ranges that keep a game small.

The probes of issue 56 are refused in one line before any TextArena code runs; every table entry's
defaults are TextArena's own (what its registry fixes for the id, else the constructor's default)
and build a game that plays; the table only names games that run here.
"""

from __future__ import annotations

import importlib
import inspect
import random
import time

import pytest

from arena.game import GameError
from games import textarena_adapter
from games.registry import make_game, option_schema
from games.textarena_options import NO_OPTIONS, TEXTARENA_OPTIONS, schema_for

ENTRIES = sorted(TEXTARENA_OPTIONS)
RANDOM_MOVES = 6


def _registered(env_id: str) -> tuple[dict, inspect.Signature]:
    import textarena.envs.registration as registration

    spec = registration.ENV_REGISTRY[env_id]
    module_name, class_name = spec.entry_point.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return dict(spec.kwargs), inspect.signature(cls.__init__)


def _play_a_few(game_id: str, options: dict) -> None:
    """Build, reset and play a few random moves; each step must be quick."""
    game = make_game(game_id, **options)
    game.reset(7)
    rng = random.Random(7)
    for _ in range(RANDOM_MOVES):
        if game.is_over():
            break
        player = game.to_act()[0]
        started = time.perf_counter()
        game.step(player, game.random_move(player, rng))
        assert time.perf_counter() - started < 5.0, f"{game_id} {options}: one move took over 5 s"
    assert game.options == options


@pytest.mark.parametrize(
    "game_id,options,refusal",
    [
        # issue 56: looped forever inside TextArena's first move
        ("textarena:Minesweeper-v0", {"rows": 3, "cols": 3, "num_mines": 100}, "option rows=3: must be 5-16"),
        ("textarena:Minesweeper-v0", {"rows": 5, "cols": 5, "num_mines": 20}, "option num_mines=20: at most 8 for a 5x5 board"),
        # issue 56: grew serve-env past 1.2 GB and a 64 MiB reply
        ("textarena:ConnectFour-v0", {"num_rows": 8000, "num_cols": 8000}, "option num_rows=8000: must be 4-10"),
        ("textarena:ConnectFour-v0", {"num_cols": True}, "option num_cols=True: must be a whole number 4-10"),
        ("textarena:ConnectFour-v0", {"rows": 6}, "unknown option 'rows'; it takes num_rows, num_cols, is_open"),
        ("textarena:TicTacToe-v0", {"board_size": 5}, "textarena:TicTacToe-v0 takes no options, got 'board_size'"),
        ("textarena:Nim-v0", {"piles": [3] * 50}, "option piles=.*: must be a list of 1-6 whole numbers"),
        ("textarena:Poker-v0", {"big_blind": 5}, "option big_blind=5: must be above small_blind \\(10\\)"),
        ("textarena:Mastermind-v0", {"code_length": 6, "num_numbers": 4}, "option code_length=6: at most num_numbers"),
        ("textarena:TruthAndDeception-v0", {"max_turns": 7}, "option max_turns=7: must be even"),
        ("textarena:LogicPuzzle-v0", {"difficulty": "medium"}, "option difficulty='medium': must be one of easy, hard"),
    ],
)
def test_probes_are_refused_in_one_line_before_textarena_runs(game_id: str, options: dict, refusal: str) -> None:
    started = time.perf_counter()
    with pytest.raises(GameError, match=refusal) as caught:
        make_game(game_id, **options)
    assert "\n" not in str(caught.value) and str(caught.value).startswith(game_id)
    assert time.perf_counter() - started < 1.0


def test_refusal_comes_before_the_env_is_built(monkeypatch: pytest.MonkeyPatch) -> None:
    import textarena as ta

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("ta.make was reached")

    monkeypatch.setattr(ta, "make", must_not_run)
    with pytest.raises(GameError, match="num_mines"):
        make_game("textarena:Minesweeper-v0", num_mines=10**6).reset(0)


def test_given_options_are_passed_on_cleaned_and_defaults_stay_textarenas() -> None:
    game = make_game("textarena:Minesweeper-v0", rows="6", cols=6.0)
    assert game.options == {"rows": 6, "cols": 6}  # what the game id and stored states carry
    game.reset(0)
    assert (game._env.rows, game._env.cols, game._env.num_mines) == (6, 6, 10)
    assert make_game("textarena:Minesweeper-v0").options == {}


def test_wrapper_variants_share_the_entry_and_other_variants_take_none() -> None:
    assert schema_for("ConnectFour-v0-raw") is TEXTARENA_OPTIONS["ConnectFour-v0"]
    assert schema_for("ConnectFour-v0-train") is TEXTARENA_OPTIONS["ConnectFour-v0"]
    assert schema_for("ConnectFour-v0-large") is NO_OPTIONS
    assert schema_for("TicTacToe-v0") is NO_OPTIONS


def test_the_table_names_only_playable_games() -> None:
    playable = {i.id.removeprefix("textarena:") for i in textarena_adapter.game_infos() if i.available}
    assert set(ENTRIES) <= playable, set(ENTRIES) - playable


@pytest.mark.parametrize("env_id", ENTRIES)
def test_declared_defaults_are_textarenas_own(env_id: str) -> None:
    fixed, signature = _registered(env_id)
    for option in TEXTARENA_OPTIONS[env_id].options:
        assert option.name in signature.parameters, f"{env_id}: the constructor takes no {option.name}"
        theirs = fixed.get(option.name, signature.parameters[option.name].default)
        ours = TEXTARENA_OPTIONS[env_id].defaults()[option.name]
        assert ours == (list(theirs) if isinstance(theirs, tuple) else theirs), (env_id, option.name)


@pytest.mark.parametrize("env_id", ENTRIES)
def test_defaults_given_explicitly_build_and_play(env_id: str) -> None:
    game_id = "textarena:" + env_id
    _play_a_few(game_id, TEXTARENA_OPTIONS[env_id].defaults())
    described = option_schema(game_id)
    assert [o["name"] for o in described["options"]] == list(TEXTARENA_OPTIONS[env_id].names)


def _bounds(env_id: str) -> list[tuple[str, dict]]:
    """Each option at the ends of its range (others at their defaults), where the rules allow it."""
    schema = TEXTARENA_OPTIONS[env_id]
    cases = []
    for option in schema.options:
        if option.kind in ("int", "float"):
            ends = [option.low, option.high]
        elif option.kind == "choice":
            ends = [option.choices[0], option.choices[-1]]
        elif option.kind == "bool":
            ends = [not option.default]
        elif option.kind == "int_list":
            ends = [[int(option.high)] * option.max_items, [int(option.low)]]
        else:
            continue
        for end in ends:
            value = int(end) if option.kind == "int" else end
            try:
                schema.validate(env_id, {option.name: value})
            except GameError:
                continue  # a cross-field rule refuses this end with the other defaults
            cases.append((env_id, {option.name: value}))
    return cases


@pytest.mark.parametrize("env_id,options", [case for env_id in ENTRIES for case in _bounds(env_id)])
def test_range_ends_build_and_play_quickly(env_id: str, options: dict) -> None:
    _play_a_few("textarena:" + env_id, options)


def _all_at_the_top(env_id: str) -> dict:
    """Every option at the top of its range, one after the other, as far as the rules allow."""
    schema = TEXTARENA_OPTIONS[env_id]
    chosen: dict = {}
    for option in schema.options:
        top = {
            "int": option.high,
            "float": option.high,
            "choice": option.choices[-1] if option.choices else None,
            "int_list": [option.high] * option.max_items,
        }.get(option.kind)
        if top is None:
            continue
        trial = dict(chosen, **{option.name: int(top) if option.kind == "int" else top})
        try:
            schema.validate(env_id, trial)
        except GameError:
            continue
        chosen = trial
    return chosen


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENTRIES)
def test_the_largest_allowed_game_finishes_under_random_play(env_id: str) -> None:
    """The ranges are there to keep a game finishing: at the top of every range (measured: each
    finishes in 1-400 random moves, at most 1.2 s), random play ends well inside the cap."""
    options = _all_at_the_top(env_id)
    game = make_game("textarena:" + env_id, **options)
    game.reset(1)
    rng = random.Random(1)
    started = time.perf_counter()
    for _ in range(3000):
        if game.is_over():
            break
        player = game.to_act()[0]
        game.step(player, game.random_move(player, rng))
    assert game.is_over(), f"{env_id} {options}: not over after 3000 random moves"
    assert time.perf_counter() - started < 30
