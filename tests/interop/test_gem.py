"""Our games as GEM environments: made by GEM's own `gem.make`, played under GEM's own
chat-concatenation observation wrapper, reproducible by seed."""

from __future__ import annotations

import gem
import pytest
from gem.wrappers.wrapper_factory import get_wrapper_fns
from transformers import AutoTokenizer

import interop.gem
from arena.llm.model import local_model_dir
from games.registry import native_games


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(local_model_dir(show_progress=False))


def wrapped(env_id: str, tokenizer, **kwargs):
    env = gem.make(env_id, **kwargs)
    for wrap in get_wrapper_fns("concat_chat", tokenizer=tokenizer):
        env = wrap(env)
    return env


def first_legal_episode(env, seed: int) -> tuple[list[str], float, dict]:
    """Play the first legal move every turn; every observation, the final reward and info."""
    obs, info = env.reset(seed=seed)
    observations, done, reward = [obs], False, 0.0
    while not done:
        obs, reward, terminated, truncated, info = env.step(f"I play [{info['legal_moves'][0]}]")
        observations.append(obs)
        done = terminated or truncated
    return observations, reward, info


def test_every_playable_game_is_registered_under_arena_ids() -> None:
    for game_id in native_games():
        assert f"arena:{game_id}" in interop.gem.GEM_IDS
    assert "arena:textarena:ConnectFour-v0" in interop.gem.GEM_IDS


def test_a_wrapped_episode_grows_one_chat_and_pays_the_outcome(tokenizer) -> None:
    env = wrapped("arena:kuhn_poker", tokenizer, opponents=["bot"])
    observations, reward, info = first_legal_episode(env, seed=5)
    final = observations[-1]
    assert final.startswith("<|im_start|>system") and final.endswith("<|im_start|>assistant\n")
    assert final.count("<|im_start|>assistant") == len(observations)  # every reply is in the chat
    assert "Rules:" in final and "Legal moves: check, bet" in final
    record = env.unwrapped.record
    assert record.outcome == info["outcome"] and info["status"] == "finished"
    assert reward == record.outcome["scores"][0]
    assert [t.policy for t in record.turns if t.player == 0] == ["client"] * sum(1 for t in record.turns if t.player == 0)
    env.close()


def test_seeds_reproduce_episodes(tokenizer) -> None:
    a = wrapped("arena:liars_dice", tokenizer, opponents=["bot"])
    b = wrapped("arena:liars_dice", tokenizer, opponents=["bot"])
    assert first_legal_episode(a, seed=11) == first_legal_episode(b, seed=11)
    assert first_legal_episode(a, seed=12)[0][0] != first_legal_episode(b, seed=11)[0][0]  # another deal
    a.close()
    b.close()


def test_an_invalid_reply_gets_the_games_feedback_and_no_reward() -> None:
    env = gem.make("arena:tictactoe", seat=1)
    obs, info = env.reset(seed=0)
    assert "You are O" in obs and info["legal_moves"]
    obs, reward, terminated, truncated, info = env.step("[99]")
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["attempt"] == 1 and "rejected" in obs and info["feedback"] in obs
    env.close()


def test_textarena_games_play_under_gem_too() -> None:
    env = gem.make("arena:textarena:TicTacToe-v0", seed=3)
    obs, info = env.reset()
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(env.sample_random_action())
        done = terminated or truncated
    assert info["status"] == "finished" and reward == info["outcome"]["scores"][0]
    assert env.seed == 3
    env.close()


def test_a_reply_without_a_bracketed_move_is_an_invalid_attempt_with_the_format_feedback() -> None:
    """As in a league: the strict parser's rejection reaches the game (an invalid attempt whose
    feedback quotes the format), the unformatted text is never played as a move, and the record
    keeps the reply as the model wrote it."""
    env = gem.make("arena:tictactoe", opponents=["bot"], seat=0)
    _obs, info = env.reset(seed=3)
    reply = "You have effectively moved to the cell 4 in the 4th row"
    obs, reward, terminated, truncated, info = env.step(reply)
    assert info["parse"] == "unformatted" and info["attempt"] == 1 and not (terminated or truncated)
    assert "[" in obs and "4" in info["legal_moves"]  # the feedback quotes the format; cell 4 is still free
    obs, reward, terminated, truncated, info = env.step("[4]")
    assert info["parse"] != "unformatted" and "4" not in info["legal_moves"]
    turns = [t for t in env.unwrapped.record.turns if t.player == 0] if env.unwrapped.record else None
    if turns is None:  # the record is kept once the match ends: finish it with legal moves
        while not (terminated or truncated):
            obs, reward, terminated, truncated, info = env.step(f"[{info['legal_moves'][0]}]")
        turns = [t for t in env.unwrapped.record.turns if t.player == 0]
    assert turns[0].raw == reply and not turns[0].valid
    assert turns[1].raw == "[4]" and turns[1].valid
