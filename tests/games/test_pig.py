"""Pig rules: busting on a 1, holding, eliminated players, and the hold-at-20 bot."""

from games.registry import make_game
from tests.games.playing import bot_first_places


def test_pig_bust_and_hold():
    game = make_game("pig", 3, target=10)
    game.reset(4)
    while True:
        game.step(0, "roll")
        if game.to_act() != [0]:
            assert game.scores[0] == 0 and game.turn_total == 0  # rolled a 1
            break
        if game.turn_total >= 10:
            game.step(0, "hold")
            assert game.is_over() and game.outcome().ranks[0] == 1
            break


def test_pig_eliminated_player_is_skipped_and_ranks_last():
    game = make_game("pig", 3, target=10, max_rounds=2)
    game.reset(0)
    for _ in range(3):
        game.step(0, "jump")
    assert game.eliminated == [0] and game.to_act() == [1]
    while not game.is_over():
        player = game.to_act()[0]
        assert player != 0
        game.step(player, "hold")
    assert game.outcome().ranks[0] == 3


def test_pig_bot_beats_random():
    players = 2
    wins, games = bot_first_places("pig", players), 30
    assert wins > games / players, f"pig: bot won {wins}/{games}"
