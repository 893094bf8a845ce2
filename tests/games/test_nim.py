"""Nim rules: move formats, bad moves, last take wins, and the optimal (Bouton) bot."""

import itertools
import random

import pytest

from games.nim import nim_sum
from games.registry import make_game
from tests.games.playing import play


@pytest.mark.parametrize("text", ["2 3", "[2 3]", "2,3", " 2, 3 ", "heap 2 take 3", "take 3 from heap 2", "2-3"])
def test_nim_move_formats(text: str) -> None:
    game = make_game("nim")
    game.reset(0)
    assert game.step(0, text).move == "2 3" and game.heaps == [3, 1, 5]


@pytest.mark.parametrize("text", ["4 1", "0 1", "1 4", "1 0", "-1 2", "2 -3", "2", "1 2 3", "2.5 1", "9" * 70])
def test_nim_rejects_bad_moves(text: str) -> None:
    game = make_game("nim")
    game.reset(0)
    result = game.step(0, text)
    assert not result.valid and result.feedback and game.heaps == [3, 4, 5]


def test_nim_last_take_wins() -> None:
    game = make_game("nim", heaps=[1, 2])
    game.reset(0)
    play(game, ["2 2", "1 1"])
    out = game.outcome()
    assert out.scores == [0.0, 1.0] and "Player 1 took the last object" in out.reason
    game.reset(0)
    result = game.step(0, "1 1")
    assert result.valid and not game.is_over()
    assert not game.step(1, "1 1").valid  # the heap is empty now


def test_nim_bot_leaves_zero_nim_sum() -> None:
    game = make_game("nim", heaps=[3, 4, 5])
    rng = random.Random(0)
    for heaps in itertools.product(range(6), repeat=3):
        if not nim_sum(list(heaps)):
            continue
        game.reset(0)
        game.heaps = list(heaps)
        play(game, [game.bot_move(0, rng)])
        assert nim_sum(game.heaps) == 0, f"from {heaps} the bot left {game.heaps}"


def test_nim_bot_never_loses_a_winning_position() -> None:
    rng = random.Random(1)
    for heaps in itertools.product(range(1, 6), repeat=3):
        if not nim_sum(list(heaps)):
            continue
        game = make_game("nim", heaps=list(heaps))
        for seed in range(3):
            game.reset(seed)
            while not game.is_over():
                player = game.to_act()[0]
                move = game.bot_move(player, rng) if player == 0 else game.random_move(player, rng)
                play(game, [move])
            assert game.outcome().winners == [0], f"the bot lost from the winning position {heaps}"
