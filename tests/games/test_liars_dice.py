"""Liar's Dice rules: challenges, wild ones, bid spellings, elimination order and the bot."""

import random

import pytest

from arena.game import GameError
from games.registry import make_game
from tests.games.playing import bot_first_places, play


def test_liars_dice_challenge_resolution():
    game = make_game("liars_dice", 2)
    game.reset(0)
    game.dice = [[2, 2, 5, 6, 6], [2, 3, 3, 4, 1]]
    play(game, ["bid 3 2", "liar"])  # three 2s exist: the challenger (player 1) loses a die
    assert [len(h) for h in game.dice] == [5, 4]
    game.dice = [[6, 6, 6, 6, 6], [1, 1, 1, 1]]
    # the loser (player 1) starts the next round
    assert game.to_act() == [1]
    play(game, ["bid 5 1", "liar"])  # only four 1s: the bidder (player 1) loses a die
    assert [len(h) for h in game.dice] == [5, 3]
    assert not game.step(game.to_act()[0], "bid 0 3").valid


def test_liars_dice_elimination_order_gives_ranks():
    game = make_game("liars_dice", 3, dice=1)
    game.reset(1)
    rng = random.Random(0)
    while not game.is_over():
        player = game.to_act()[0]
        game.step(player, game.bot_move(player, rng))
    out = game.outcome()
    assert sorted(out.ranks) == [1, 2, 3]
    winner = out.ranks.index(1)
    assert game.alive() == [winner] and out.ranks[game.eliminated[0]] == 3


def test_liars_dice_wild_ones_count_for_other_faces_only():
    game = make_game("liars_dice", 2, wild_ones=True)
    game.reset(0)
    game.dice = [[1, 4, 6], [1, 2, 3]]
    play(game, ["bid 3 4", "liar"])  # one 4 plus two wild 1s: the bid holds, the challenger loses
    assert [len(h) for h in game.dice] == [3, 2]
    assert game.to_act() == [1]
    game.dice = [[1, 5, 5], [1, 2]]
    play(game, ["bid 3 1", "liar"])  # a bid on 1s counts only the two 1s: the bidder (1) loses
    assert [len(h) for h in game.dice] == [3, 1]
    assert "Ones are wild" in game.observe(0).text


def test_liars_dice_ones_not_wild_by_default():
    game = make_game("liars_dice", 2)
    game.reset(0)
    game.dice = [[1, 4, 6, 2, 2], [1, 2, 3, 3, 3]]
    play(game, ["bid 2 4", "challenge"])  # a single 4; the 1s do not count
    assert [len(h) for h in game.dice] == [4, 5]
    assert "Ones are not wild" in game.observe(1).text


@pytest.mark.parametrize("text", ["3 4", "[3 4]", "bid 3 4", "BID 3 4", "[bid 3 4]", "3x4"])
def test_liars_dice_bid_spellings(text):
    game = make_game("liars_dice", 2)
    game.reset(0)
    assert game.step(0, text).move == "bid 3 4"


def test_liars_dice_rejects_bad_bids_and_early_challenge():
    game = make_game("liars_dice", 2)
    game.reset(0)
    assert "no bid" in game.step(0, "liar").feedback
    assert "not 1-6" in game.step(0, "bid 2 7").feedback
    game.reset(0)
    play(game, ["bid 3 4"])
    assert "does not raise" in game.step(1, "bid 3 3").feedback
    assert "not 1-10" in game.step(1, "bid 11 6").feedback  # more than the dice in play
    assert game.step(1, "bid 3 5").valid


def test_liars_dice_scripted_eliminations_rank_players_in_reverse_order():
    game = make_game("liars_dice", 3, dice=1)
    game.reset(0)
    game.dice = [[2], [3], [4]]
    play(game, ["bid 1 5", "liar"])  # no 5 anywhere: Player 0 loses its only die and is out
    assert game.eliminated == [0] and game.to_act() == [1]
    game.dice = [[], [2], [6]]
    play(game, ["bid 1 2", "bid 1 6", "liar"])  # a 6 is there: the challenger (1) is out
    assert game.is_over()
    assert game.outcome().ranks == [3, 2, 1]
    assert all("P1 2; P2 6" in game.observe(p).text for p in range(3))  # the reveal is public


def test_liars_dice_invalid_moves_eliminate_and_play_goes_on():
    game = make_game("liars_dice", 3)
    game.reset(0)
    results = [game.step(0, "banana") for _ in range(3)]
    assert results[-1].penalty == "eliminate" and game.eliminated == [0]
    assert game.to_act() == [1] and game.dice[0] == [] and not game.is_over()
    assert 0 not in game.to_act()


def test_liars_dice_options_are_validated():
    with pytest.raises(GameError, match="wild"):
        make_game("liars_dice", 2, wildones=True)
    with pytest.raises(GameError, match="wild_ones"):
        make_game("liars_dice", 2, wild_ones="maybe")
    assert make_game("liars_dice", 2, wild_ones="yes").options["wild_ones"] is True


def test_forfeit_of_the_last_two_keeps_elimination_order():
    game = make_game("liars_dice", 3)
    game.reset(0)
    first = game.to_act()[0]
    assert game.fail(first, "timeout").penalty == "eliminate"
    second = game.to_act()[0]
    assert game.fail(second, "timeout").penalty == "forfeit"
    ranks = game.outcome().ranks
    assert ranks[first] == 3 and ranks[second] == 2  # the one who lasted longer ranks higher


@pytest.mark.parametrize("players", [2, 4])
def test_liars_dice_bot_beats_random(players):
    wins, games = bot_first_places("liars_dice", players), 30
    assert wins > games / players, f"liars_dice: bot won {wins}/{games}"
