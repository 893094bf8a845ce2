"""Chess rules: notations, mate, draws, repetition history in saved states, views and the bot."""

import asyncio
import random

import pytest

from arena.game import GameError
from arena.match import play_match
from arena.policy import make_policy
from games.registry import make_game
from tests.games.playing import play


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
