"""`Game.check_move` (the game's verdict without playing the move, which the rethink sampler shows a
model) agrees with `step` in every native game and changes nothing; `Game.move_notation` names
chess's legal moves in SAN, in legal-move order, each accepted by `step`."""

from __future__ import annotations

import random

import pytest

from games.registry import make_game, native_games

CANDIDATES = ("", "[0]", "banana", "99", "e2e4", "Nf3", "raise 3", "[Offer] 1 wood for 1 sheep")


@pytest.mark.parametrize("game_id", sorted(native_games()))
def test_check_move_agrees_with_step_and_changes_nothing(game_id):
    game = make_game(game_id)
    rng = random.Random(7)
    game.reset(3)
    decisions = 0
    while not game.is_over() and decisions < 25:
        player = game.to_act()[0]
        legal = game.legal_moves(player) or []
        for action in [*rng.sample(legal, min(3, len(legal))), *CANDIDATES]:
            state = game.get_state()
            verdict = game.check_move(player, action)
            assert game.get_state() == state, f"{game_id}: check_move changed the state"
            result = game.step(player, action)
            assert (verdict is None) == result.valid, (game_id, action, verdict, result)
            if not result.valid:
                assert result.feedback.startswith(verdict), (game_id, action)  # the feedback step gives, before the attempts left
            game.set_state(state)
        game.step(player, game.random_move(player, rng))
        decisions += 1


def test_chess_names_its_moves_in_san_too():
    game = make_game("chess")
    game.reset(0)
    san = game.move_notation(0, "san")
    assert len(san) == len(game.legal_moves(0)) == 20 and "Nf3" in san and "e4" in san
    assert san.index("Nf3") == game.legal_moves(0).index("g1f3")
    assert game.move_notation(0, "fen") is None and make_game("tictactoe").move_notation(0, "san") is None
    assert game.step(0, "Nf3").valid
