"""Rule tests for chess, Liar's Dice, Pig, Battleship, Negotiation and the sealed-bid auction."""

import asyncio
import random

import pytest

from arena.match import play_match
from arena.policy import make_policy
from arena.game import GameError
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


@pytest.mark.parametrize(
    "game_id,players",
    [("liars_dice", 2), ("liars_dice", 4), ("pig", 2), ("battleship", 2), ("negotiation", 2), ("sealed_bid_auction", 3)],
)
def test_bot_beats_random(game_id, players):
    wins = 0
    games = 30
    for seed in range(games):
        seats = [make_policy("bot")] + [make_policy("random") for _ in range(players - 1)]
        record = asyncio.run(play_match(make_game(game_id, players), seats, seed=seed))
        wins += record.outcome["ranks"][0] == 1
    assert wins > games / players, f"{game_id}: bot won {wins}/{games}"


# ---- Liar's Dice ---------------------------------------------------------------------------------
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


# ---- Negotiation ---------------------------------------------------------------------------------
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


# ---- Chess ---------------------------------------------------------------------------------------
def test_chess_castling_and_promotion_notations():
    game = make_game("chess")
    game.reset(0)
    play(game, ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6"])
    assert game.step(0, "0-0").move == "e1g1"
    game.set_state({**game.get_state(), "start_fen": "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1", "moves": []})
    assert game.step(0, "e8=Q").move == "e7e8q"
    game.set_state({**game.get_state(), "start_fen": "8/4P1k1/8/8/8/8/8/4K3 w - - 0 1", "moves": []})
    assert game.step(0, "[e7e8n]").move == "e7e8n"


def test_chess_stalemate_and_max_plies_are_draws():
    game = make_game("chess")
    game.reset(0)
    game.set_state({**game.get_state(), "start_fen": "7k/8/6Q1/8/8/8/8/K7 w - - 0 1", "moves": []})
    play(game, ["Qf7"])  # the black king has no move and is not in check
    assert game.outcome().scores == [0.5, 0.5] and "stalemate" in game.outcome().reason
    short = make_game("chess", max_plies=4)
    short.reset(0)
    play(short, ["Nf3", "Nf6", "Ng1", "Ng8"])
    assert short.outcome().is_draw and "4 half-moves" in short.outcome().reason


def test_chess_bad_saved_state_is_refused():
    game = make_game("chess")
    game.reset(0)
    with pytest.raises(GameError, match="illegal move"):
        game.set_state({**game.get_state(), "moves": ["e2e5"]})


def test_chess_bot_mates_in_one_and_takes_a_hanging_queen():
    game = make_game("chess")
    game.reset(0)
    play(game, ["f3", "e5", "g4"])
    assert game.bot_move(1, random.Random(0)) == "d8h4"
    game.set_state({**game.get_state(), "start_fen": "4k3/8/8/3q4/8/8/8/3RK3 w - - 0 1", "moves": []})
    assert game.bot_move(0, random.Random(0)) == "d1d5"


def test_chess_bot_does_not_allow_mate_in_one():
    game = make_game("chess")
    game.reset(0)
    # Black to move: taking the d4 pawn (Nxd4, Bxd4, exd4) leaves Qxf7#, which a pure 2-ply
    # material search does not see, since a mate costs no material.
    game.set_state({**game.get_state(), "start_fen": "r1bqk1nr/pppp1ppp/2n5/2b1p2Q/2BPP3/8/PPP2PPP/RNB1K1NR b KQkq - 0 4", "moves": []})
    probe = make_game("chess")
    for seed in range(5):
        move = game.bot_move(1, random.Random(seed))
        probe.set_state(game.get_state())
        play(probe, [move])
        assert not (probe.step(0, "h5f7").valid and probe.is_over()), f"{move} allows Qxf7#"


def test_chess_black_sees_the_board_from_its_side():
    game = make_game("chess")
    game.reset(0)
    white, black = game.observe(0).text.splitlines(), game.observe(1).text.splitlines()
    assert white[1].startswith("8 r") and white[9].strip() == "a b c d e f g h"
    assert black[1].startswith("1 R") and black[9].strip() == "h g f e d c b a"


# ---- Battleship ----------------------------------------------------------------------------------
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


# ---- Pig -----------------------------------------------------------------------------------------
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


# ---- Sealed-bid auction --------------------------------------------------------------------------
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


def test_chess_bot_beats_random_with_either_colour():
    wins = 0
    for seed in range(8):
        seats = [make_policy("bot"), make_policy("random")]
        bot_seat = seed % 2
        if bot_seat:
            seats.reverse()
        record = asyncio.run(play_match(make_game("chess"), seats, seed=seed))
        wins += record.outcome["ranks"][bot_seat] == 1 and record.outcome["ranks"][1 - bot_seat] == 2
    assert wins >= 6, f"chess bot won {wins}/8 against random"
