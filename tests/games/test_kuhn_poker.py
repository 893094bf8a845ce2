"""Kuhn poker rules: payouts, betting, alternating hands, hidden cards and the equilibrium bot."""

import random

import pytest

from arena.game import NativeGame
from games.registry import make_game
from tests.games.playing import bot_vs_random, play


def kuhn_with_cards(cards: list[int], hands: int = 1) -> NativeGame:
    game = make_game("kuhn_poker", hands=hands)
    game.reset(0)
    game.cards = list(cards)
    return game


@pytest.mark.parametrize(
    "cards,moves,scores",
    [
        ([2, 0], ["check", "check"], [1.0, -1.0]),
        ([0, 1], ["check", "check"], [-1.0, 1.0]),
        ([2, 1], ["bet", "call"], [2.0, -2.0]),
        ([1, 2], ["check", "bet", "call"], [-2.0, 2.0]),
        ([2, 0], ["bet", "fold"], [1.0, -1.0]),
        ([2, 0], ["check", "bet", "fold"], [-1.0, 1.0]),  # the bettor wins without a showdown
    ],
)
def test_kuhn_payouts(cards: list[int], moves: list[str], scores: list[float]) -> None:
    game = kuhn_with_cards(cards)
    play(game, moves)
    assert game.outcome().scores == scores


def test_kuhn_legal_moves_follow_the_betting() -> None:
    game = kuhn_with_cards([0, 1])
    assert game.legal_moves(0) == ["check", "bet"]
    result = game.step(0, "call")
    assert not result.valid and "cannot call" in result.feedback
    assert game.step(0, "[Bet]").move == "bet"
    assert game.to_act() == [1] and game.legal_moves(1) == ["call", "fold"]


def test_kuhn_hands_alternate_first_actor_and_sum_to_zero() -> None:
    game = make_game("kuhn_poker")  # default: 3 hands, like TextArena's KuhnPoker-v0
    game.reset(5)
    firsts = []
    for _ in range(3):
        firsts.append(game.to_act()[0])
        play(game, ["check", "check"])
    assert firsts == [0, 1, 0] and game.is_over()
    out = game.outcome()
    assert sum(out.scores) == 0 and abs(out.scores[0]) in (1.0, 3.0)
    assert len(game.results) == 3 and all(r.startswith("Hand") for r in game.results)


def test_kuhn_view_shows_own_card_only() -> None:
    game = kuhn_with_cards([2, 0])
    assert "Your card: K" in game.observe(0).text and "K" not in game.observe(1).text.replace("Kuhn", "")


def test_kuhn_bot_plays_the_equilibrium_extremes() -> None:
    rng = random.Random(0)
    for _ in range(20):
        game = kuhn_with_cards([0, 2])
        play(game, ["bet"])
        assert game.bot_move(1, rng) == "call"  # K always calls
        game = kuhn_with_cards([2, 0])
        play(game, ["bet"])
        assert game.bot_move(1, rng) == "fold"  # J always folds to a bet
        game = kuhn_with_cards([1, 0])
        assert game.bot_move(0, rng) == "check"  # Q never opens with a bet


def test_kuhn_bot_beats_random() -> None:
    margin, _ = bot_vs_random("kuhn_poker", 400)
    assert margin > 0.4, f"equilibrium bot won only {margin:.2f} chips per game against random"
