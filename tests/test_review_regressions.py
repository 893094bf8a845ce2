"""Regressions for bugs a review found in the core and the TextArena adapter."""

import pytest

from arena.game import GameError
from games.registry import make_game


@pytest.mark.parametrize("env_id", ["textarena:ThreePlayerTicTacToe-v0", "textarena:LiarsDice-v0"])
def test_textarena_failure_in_free_for_all_never_lets_the_player_move_again(env_id):
    game = make_game(env_id, 3)
    game.reset(1)
    player = game.to_act()[0]
    result = game.fail(player, "timeout")
    assert result.penalty in {"eliminate", "forfeit"}
    assert game.is_over() or player not in game.to_act()


def test_forfeit_of_the_last_two_keeps_elimination_order():
    game = make_game("liars_dice", 3)
    game.reset(0)
    first = game.to_act()[0]
    assert game.fail(first, "timeout").penalty == "eliminate"
    second = game.to_act()[0]
    assert game.fail(second, "timeout").penalty == "forfeit"
    ranks = game.outcome().ranks
    assert ranks[first] == 3 and ranks[second] == 2  # the one who lasted longer ranks higher


def test_state_with_other_options_is_refused():
    saved = make_game("prisoners_dilemma", rounds=10)
    saved.reset(0)
    other = make_game("prisoners_dilemma", rounds=5)
    with pytest.raises(GameError, match="options"):
        other.set_state(saved.get_state())
