"""Leduc Hold'em rules: hand ranking, payouts, the raise cap, the board card and the bot."""

import random

import pytest

from arena.game import NativeGame
from games.leduc_holdem import equity, hand_winner
from games.registry import make_game
from tests.games.playing import bot_vs_random, play


def leduc_with_cards(cards: list[int], board: int) -> NativeGame:
    game = make_game("leduc_holdem")
    game.reset(0)
    game.cards, game.board = list(cards), board
    return game


def test_leduc_hand_ranking() -> None:
    assert hand_winner([0, 2], 0) == 0  # a pair of jacks beats a king
    assert hand_winner([2, 1], 0) == 0  # higher card
    assert hand_winner([1, 1], 2) is None  # split
    assert equity(2, 2) == 1.0 and equity(0, None) < equity(1, None) < equity(2, None)


@pytest.mark.parametrize(
    "cards,board,moves,scores",
    [
        ([2, 0], 1, ["check", "check", "check", "check"], [1.0, -1.0]),
        ([2, 0], 0, ["check", "check", "check", "check"], [-1.0, 1.0]),  # J pairs the board
        ([1, 1], 2, ["bet", "call", "bet", "call"], [0.0, 0.0]),  # split pot
        ([2, 1], 0, ["bet", "raise", "call", "bet", "raise", "call"], [13.0, -13.0]),  # the maximum
        ([2, 1], 0, ["bet", "fold"], [1.0, -1.0]),
        ([2, 1], 0, ["bet", "raise", "fold"], [-3.0, 3.0]),
        ([2, 1], 0, ["check", "check", "bet", "call"], [5.0, -5.0]),
    ],
)
def test_leduc_payouts(cards: list[int], board: int, moves: list[str], scores: list[float]) -> None:
    game = leduc_with_cards(cards, board)
    play(game, moves)
    out = game.outcome()
    assert out.scores == scores
    assert out.is_draw == (scores[0] == 0)


def test_leduc_raise_cap_and_board_reveal() -> None:
    game = leduc_with_cards([2, 1], 0)
    assert "Board card: not dealt yet" in game.observe(0).text
    play(game, ["bet"])
    assert game.legal_moves(1) == ["call", "raise", "fold"]
    play(game, ["raise"])
    assert game.legal_moves(0) == ["call", "fold"]  # two bets/raises this round: capped
    assert not game.step(0, "raise").valid
    play(game, ["call"])
    assert game.betting_round == 1 and game.put_in == [5, 5]
    assert "Board card: J" in game.observe(1).text
    assert game.to_act() == [0] and game.legal_moves(0) == ["check", "bet"]


def test_leduc_bot_bets_strong_and_folds_weak() -> None:
    rng = random.Random(0)
    game = leduc_with_cards([2, 0], 2)
    play(game, ["check", "check"])  # round 2: player 0 has a pair of kings
    assert game.bot_move(0, rng) == "bet"
    play(game, ["check", "bet"])  # player 1 (a jack with a king on board) faces a bet of 4
    assert game.bot_move(0, rng) == "raise"
    game = leduc_with_cards([2, 0], 2)
    play(game, ["check", "check", "bet"])
    assert game.bot_move(1, rng) == "fold"


def test_leduc_bot_beats_random() -> None:
    margin, _ = bot_vs_random("leduc_holdem", 400)
    assert margin > 1.0, f"the heuristic bot won only {margin:.2f} chips per game against random"
