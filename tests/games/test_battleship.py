"""Battleship rules: sinking the fleet wins, bad shots, hidden enemy ships, and the bot."""

from games.registry import make_game
from tests.games.playing import bot_first_places, play


def test_battleship_sinking_wins():
    game = make_game("battleship")
    game.reset(2)
    targets = [game._name(c) for ship in game.ships[1] for c in ship]
    misses = [m for m in game.legal_moves(1)]
    for i, cell in enumerate(targets):
        game.step(0, cell)
        if not game.is_over():
            game.step(1, misses[i])
    assert game.is_over() and game.outcome().ranks == [1, 2]
    assert "sank" in " ".join(game.log)


def test_battleship_rejects_repeats_and_off_grid_shots():
    game = make_game("battleship")
    game.reset(0)
    play(game, ["A1", "A1"])
    assert "already fired" in game.step(0, "a1").feedback
    assert "off the 6x6 grid" in game.step(0, "G1").feedback
    assert game.step(0, "[b-4]").move == "B4"


def test_battleship_views_hide_the_enemy_fleet():
    game = make_game("battleship")
    game.reset(1)
    view = game.observe(0).text.split("Your shots at the enemy:")[1]
    assert "S" not in view.split("Recent events")[0]
    enemy_cell = game._name(game.ships[1][0][0])
    play(game, [enemy_cell])
    shots_view = game.observe(0).text.split("Your shots at the enemy:")[1]
    assert "X" in shots_view and "hit" in game.log[-1]


def test_battleship_bot_beats_random():
    players = 2
    wins, games = bot_first_places("battleship", players), 30
    assert wins > games / players, f"battleship: bot won {wins}/{games}"
