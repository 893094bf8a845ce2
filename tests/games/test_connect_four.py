"""Connect Four rules: wins in every direction, draws, move parsing, the view and the bot."""

import random

import pytest

from games.connect_four import has_four
from games.registry import make_game
from tests.games.playing import bot_vs_random, play


# Column sequences, X (player 0) first; each ends with X completing four in the named direction.
C4_WINS = {
    "vertical": ["1", "2", "1", "2", "1", "2", "1"],
    "horizontal": ["1", "1", "2", "2", "3", "3", "4"],
    "diagonal /": ["1", "2", "2", "3", "3", "4", "3", "4", "4", "7", "4"],
    "diagonal \\": ["7", "6", "6", "5", "5", "4", "5", "4", "4", "1", "4"],
}


# Fills all 42 cells without four in a line anywhere (columns XXXOOO / OOOXXX from the bottom).
C4_DRAW = [int(c) for c in "131311212122424243343434565655757576676767"]


@pytest.mark.parametrize("direction", C4_WINS)
def test_connect_four_detects_wins_in_every_direction(direction: str) -> None:
    game = make_game("connect_four")
    game.reset(0)
    moves = C4_WINS[direction]
    play(game, moves[:-1])
    assert not game.is_over()
    play(game, moves[-1:])
    out = game.outcome()
    assert out.scores == [1.0, 0.0] and out.ranks == [1, 2]
    assert "connected four" in out.reason


def test_connect_four_second_player_can_win() -> None:
    game = make_game("connect_four")
    game.reset(0)
    play(game, ["7", "1", "7", "2", "6", "3", "5", "4"])
    assert game.outcome().scores == [0.0, 1.0]


def test_connect_four_full_board_is_a_draw() -> None:
    game = make_game("connect_four")
    game.reset(0)
    play(game, [str(c) for c in C4_DRAW[:-1]])
    assert not game.is_over()
    play(game, [str(C4_DRAW[-1])])
    assert game.outcome().is_draw and game.outcome().reason == "the board is full"
    assert not has_four(game.bits[0]) and not has_four(game.bits[1])


def test_connect_four_move_parsing_and_full_columns() -> None:
    game = make_game("connect_four")
    game.reset(0)
    for text in ("[4]", " 4 ", "col 4", "[Column 4]"):
        probe = make_game("connect_four")
        probe.set_state(game.get_state())
        assert probe.step(0, text).move == "4"
    for text in ("0", "8", "44", "four", "4 5"):
        assert not game.step(0, text).valid
        game.invalid_counts = [0, 0]
    play(game, ["1"] * 6)
    assert "1" not in game.legal_moves(0)
    result = game.step(0, "1")
    assert not result.valid and "column 1 is full" in result.feedback
    assert "Full columns: 1." in game.observe(0).text


def test_connect_four_view_shows_the_board() -> None:
    game = make_game("connect_four")
    game.reset(0)
    play(game, ["4", "4"])
    lines = game.observe(1).text.splitlines()
    assert lines[1].split() == ["1", "2", "3", "4", "5", "6", "7"]
    assert lines[-3].split() == [".", ".", ".", "O", ".", ".", "."]
    assert lines[-2].split() == [".", ".", ".", "X", ".", ".", "."]


def test_connect_four_bot_wins_now_and_blocks() -> None:
    game = make_game("connect_four")
    rng = random.Random(0)
    game.reset(0)
    play(game, ["1", "1", "2", "2", "3", "3"])  # both threaten column 4; X to move
    assert game.bot_move(0, rng) == "4"  # win now rather than block
    game.reset(0)
    play(game, ["1", "7", "2", "6", "3"])  # X threatens 4 on the bottom row; O has no win
    assert game.bot_move(1, rng) == "4"  # block


def test_connect_four_bot_does_not_set_up_the_opponent() -> None:
    # O holds columns 1-3 of row 2, so O wins on column 4 as soon as a disc sits under that cell;
    # column 4 is empty and X (to move) has nothing forced, so X must keep out of column 4.
    game = make_game("connect_four")
    game.reset(0)
    play(game, ["1", "2", "3", "1", "7", "2", "7", "3"])
    for seed in range(10):
        assert game.bot_move(0, random.Random(seed)) != "4"


def test_connect_four_bot_beats_random() -> None:
    margin, wins = bot_vs_random("connect_four", 24)
    assert wins == 24, f"the bot lost or drew {24 - wins} of 24 games against random"
