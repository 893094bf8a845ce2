"""Our games as PettingZoo environments, checked by PettingZoo's own, unmodified test suite
(`api_test`, `seed_test`, `render_test` from the installed `pettingzoo` package)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from games.registry import make_game, native_games
from interop.pettingzoo import NATIVE_MOVE_BOUNDS, env

# Exact legal-move lists (Discrete actions, 2 and 3 players) and free-text games (Text actions).
TEXTARENA_GAMES = [
    "textarena:TicTacToe-v0",
    "textarena:ThreePlayerTicTacToe-v0",
    "textarena:ConnectFour-v0",
    "textarena:KuhnPoker-v0",
    "textarena:Nim-v0",
    "textarena:Battleship-v0",
    "textarena:LiarsDice-v0",
    "textarena:Snake-v0",
    "textarena:Poker-v0",
    "textarena:Briscola-v0",
    "textarena:IteratedPrisonersDilemma-v0",
    "textarena:SimpleNegotiation-v0",
]


@pytest.mark.parametrize("game_id", [*native_games(), *TEXTARENA_GAMES])
def test_pettingzoo_own_suite_passes(game_id: str) -> None:
    api_test(env(game_id), num_cycles=20)
    seed_test(partial(env, game_id), num_cycles=20)
    render_test(partial(env, game_id))


@pytest.mark.parametrize("game_id", list(native_games()))
def test_every_native_game_with_listed_moves_has_a_discrete_action_space(game_id: str) -> None:
    game = make_game(game_id)
    game.reset(0)
    if game.legal_moves(game.to_act()[0]) is not None:
        assert game_id in NATIVE_MOVE_BOUNDS, f"{game_id} lists its moves but has no Discrete bound"


def test_discrete_actions_index_the_legal_moves_and_rewards_are_the_outcome() -> None:
    e = env("tictactoe", render_mode="ansi")
    e.reset(seed=3)
    game = e.unwrapped.game
    assert game.seed == 3  # the same game `arena play --seed 3` plays
    while e.agents:
        agent = e.agent_selection
        obs, _reward, terminated, _truncated, info = e.last()
        if terminated:
            e.step(None)
            continue
        legal = info["legal_moves"]
        assert obs["action_mask"].tolist() == [1] * len(legal) + [0] * (9 - len(legal))
        assert obs["view"] == game.observe(int(agent.split("_")[1])).text
        assert bytes(obs["observation"]).rstrip(b"\0").decode() == obs["view"]
        before = game.move_count
        e.step(len(legal) - 1)  # the last legal move
        assert game.move_count == before + 1 and game.log
    assert game.is_over()
    scores = game.outcome().scores
    rewards = {}
    e.reset(seed=3)
    for agent in e.agent_iter():
        obs, reward, terminated, _truncated, info = e.last()
        rewards[agent] = reward
        e.step(None if terminated else len(info["legal_moves"]) - 1)
    assert [rewards["player_0"], rewards["player_1"]] == scores


def test_a_masked_action_is_refused_with_the_count_of_legal_moves() -> None:
    e = env("kuhn_poker")
    e.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 5 is masked out: 2 legal move\(s\)"):
        e.step(5)


def test_free_text_games_take_typed_moves_and_a_bad_one_gets_the_games_feedback() -> None:
    e = env("negotiation")
    e.reset(seed=1)
    assert "action_mask" not in e.observation_space("player_0").spaces
    e.step("[Accept]")  # no offer stands yet: invalid, a retry is left
    obs, _reward, _term, _trunc, info = e.last()
    assert e.agent_selection == "player_0" and "Invalid move" in (info["feedback"] or "")
    assert isinstance(obs["observation"], np.ndarray) and obs["observation"].dtype == np.uint8


def test_unseeded_resets_follow_the_last_seed() -> None:
    e = env("pig")
    e.reset(seed=10)
    e.reset()
    assert e.unwrapped.game.seed == 11
