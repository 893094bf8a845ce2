"""Rule tests for chess, Liar's Dice, Pig, Battleship, Negotiation and the sealed-bid auction."""

import asyncio
import random

import pytest

from arena.match import play_match
from arena.policy import make_policy
from games.registry import make_game


def play(game, moves):
    for move in moves:
        player = game.to_act()[0]
        result = game.step(player, move)
        assert result.valid, (move, result.feedback)


def test_chess_accepts_uci_and_san_and_detects_mate():
    game = make_game("chess")
    game.reset(0)
    play(game, ["f2f3", "e5", "[g4]", "Qh4#"])  # fool's mate, mixed notations
    assert game.is_over() and game.outcome().ranks == [2, 1] and "checkmate" in game.outcome().reason
    game.reset(0)
    assert not game.step(0, "e2e5").valid  # illegal
    assert "ambiguous" in make_ambiguous_knight_position().step(0, "Nd2").feedback


def make_ambiguous_knight_position():
    """Knights on b1 and f3 can both reach d2 once the d-pawn has moved."""
    game = make_game("chess")
    game.reset(0)
    play(game, ["Nf3", "a6", "d3", "a5"])
    return game


def test_chess_state_keeps_repetition_history():
    game = make_game("chess")
    game.reset(0)
    play(game, ["Nf3", "Nf6", "Ng1", "Ng8"] * 2)
    clone = make_game("chess")
    clone.set_state(game.get_state())
    assert clone._board.is_repetition(3) == game._board.is_repetition(3)


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


def test_negotiation_offer_accept_and_values():
    game = make_game("negotiation")
    game.reset(5)
    assert not game.step(0, "[Accept]").valid  # nothing to accept yet
    offer = game.pool[:]  # player 0 asks for everything
    game.step(0, f"Give me all. [Offer: {offer[0]} books, {offer[1]} hats, {offer[2]} balls]")
    assert not game.step(1, "[Offer: 99 books]").valid  # more than the pool
    game.step(1, "Fine. [Accept]")
    assert game.is_over() and game.outcome().scores == [10.0, 0.0]


def test_negotiation_without_deal_scores_zero():
    game = make_game("negotiation", max_turns=2)
    game.reset(0)
    play(game, ["hello", "no"])
    assert game.outcome().scores == [0.0, 0.0]


def test_auction_hides_pending_bids_and_handles_ties():
    game = make_game("sealed_bid_auction", 3)
    game.reset(0)
    game.step(0, "bid 7")
    assert "bid 7" not in game.observe(1).text and game.to_act() == [1, 2]
    game.step(1, "bid 7")
    game.step(2, "bid 3")
    assert "unsold" in game.log[-1] and game.scores == [0, 0, 0]
    assert game.round_no == 2


@pytest.mark.parametrize("game_id,players", [("liars_dice", 2), ("pig", 2), ("battleship", 2), ("negotiation", 2), ("sealed_bid_auction", 3)])
def test_bot_beats_random(game_id, players):
    wins = 0
    games = 30
    for seed in range(games):
        seats = [make_policy("bot")] + [make_policy("random") for _ in range(players - 1)]
        record = asyncio.run(play_match(make_game(game_id, players), seats, seed=seed))
        wins += record.outcome["ranks"][0] == 1
    assert wins > games / players, f"{game_id}: bot won {wins}/{games}"
