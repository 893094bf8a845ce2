"""Sealed-bid auction rules: hidden pending bids, ties, first-price payment, options and the bot."""

import pytest

from arena.game import GameError
from games.registry import make_game
from tests.games.playing import bot_first_places


def test_auction_hides_pending_bids_and_handles_ties():
    game = make_game("sealed_bid_auction", 3)
    game.reset(0)
    game.step(0, "bid 7")
    assert "bid 7" not in game.observe(1).text and game.to_act() == [1, 2]
    game.step(1, "bid 7")
    game.step(2, "bid 3")
    assert "unsold" in game.log[-1] and game.scores == [0, 0, 0]
    assert game.round_no == 2


def test_auction_winner_pays_its_bid_and_bids_show_after_the_round():
    game = make_game("sealed_bid_auction", 3)
    game.reset(0)
    game.values = [10, 5, 8]
    game.step(2, "bid 6")
    for other in (0, 1):
        assert "bid 6" not in game.observe(other).text
    game.step(0, "[bid 7]")
    game.step(1, "5")
    assert game.scores == [3, 0, 0] and game.budgets == [33, 40, 40]
    assert "Player 0: 7, Player 1: 5, Player 2: 6" in game.observe(1).text
    assert not game.step(0, "bid 34").valid  # above the remaining budget of 33


def test_auction_refuses_unknown_options():
    with pytest.raises(GameError, match="'round'"):
        make_game("sealed_bid_auction", 3, round=3)


def test_sealed_bid_auction_bot_beats_random():
    players = 3
    wins, games = bot_first_places("sealed_bid_auction", players), 30
    assert wins > games / players, f"sealed_bid_auction: bot won {wins}/{games}"
