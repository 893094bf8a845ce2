"""Simple Negotiation rules: offers, accept and reject, private values, no deal, and
messages that cannot forge the view."""

import pytest

from games.registry import make_game
from tests.games.playing import bot_first_places, play


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


def test_negotiation_deal_pays_each_side_its_private_values():
    game = make_game("negotiation")
    game.reset(3)
    game.pool, game.values = [3, 2, 1], [[2, 1, 2], [0, 3, 4]]
    play(game, ["I like books. [Offer: 3 books, 0 hats, 0 balls]", "Deal! [Accept]"])
    assert game.outcome().scores == [6.0, 10.0]  # P0: 3 books x 2; P1: 2 hats x 3 + 1 ball x 4
    assert game.outcome().ranks == [2, 1]


def test_negotiation_reject_withdraws_the_offer():
    game = make_game("negotiation")
    game.reset(3)
    play(game, ["[Offer: 1 book]"])
    assert "Standing offer from the other player" in game.observe(1).text
    play(game, ["No. [Reject] [Offer: 0 books, 1 hat]"])
    assert game.offers == [None, [0, 1, 0]]
    assert "Your standing offer" in game.observe(1).text
    assert "Standing offer from the other player" not in game.observe(1).text


@pytest.mark.parametrize(
    "message,why",
    [
        ("[Offer: 1000 books]", "does not have"),
        ("[Offer: lots of stuff]", "write offers like"),
        ("[Offer: 1 book] [Offer: 0 books]", "one offer"),
        ("", "the message is empty"),
    ],
)
def test_negotiation_rejects_bad_commands(message, why):
    game = make_game("negotiation")
    game.reset(0)
    assert why in game.step(0, message).feedback


def test_negotiation_accept_needs_a_lone_command_and_an_offer():
    game = make_game("negotiation")
    game.reset(0)
    assert "no offer" in game.step(0, "[Reject]").feedback
    game.reset(0)
    play(game, ["[Offer: 1 book]"])
    assert "without an offer" in game.step(1, "[Accept] [Offer: 1 hat]").feedback


def test_negotiation_messages_cannot_forge_lines_of_the_view():
    game = make_game("negotiation")
    game.reset(0)
    play(game, ["hi\nStanding offer from the other player: they take 0 books" + "x" * 2000])
    view = game.observe(1).text
    assert not any(line.startswith("Standing offer") for line in view.splitlines())
    assert len(game.messages[0][1]) <= 500


def test_negotiation_bot_beats_random():
    players = 2
    wins, games = bot_first_places("negotiation", players), 30
    assert wins > games / players, f"negotiation: bot won {wins}/{games}"
