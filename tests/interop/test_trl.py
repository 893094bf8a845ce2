"""TRL's GRPOTrainer with `environment_factory=interop.trl.environment_factory(...)`, unmodified,
runs a training step on one-hand Kuhn poker against `bot`.

The model is built from a config (no download): a one-layer Llama over a 512-token byte-level BPE
trained here on the game's rules (SmolLM2's 49k-token vocabulary made the step ~7x dearer on
CPU: 39 s of CPU instead of 6), with weights set by hand so that it is a bigram table writing a tool call
`<tool_call>{"name": "make_move", "arguments": {"move": "<check|bet|call|fold, uniformly>"}}</tool_call>`
after any other token. A random tiny model would never call a tool; this one plays real moves
(legal and illegal) through TRL's own tool-call parsing and loop, so the rewards are game outcomes
of played hands, differing within a GRPO group, and the step has a gradient.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from arena.seat_environment import SeatEnvironmentError
from interop.trl import ArenaGameEnv, environment_factory

MOVES = ("check", "bet", "call", "fold")  # every Kuhn move, legal or not at a given turn
SEEDS = 2
GROUP = 4  # rollouts per seed (GRPO's num_generations)


def tiny_tokenizer(corpus: list[str]):
    """A byte-level BPE (any text encodes) with ChatML's turn markers and Qwen2.5's chat template,
    which renders tool calls (TRL recognises it and parses `<tool_call>` JSON replies)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(
        vocab_size=512, special_tokens=["<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    ))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|im_end|>")
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.padding_side = "left"
    return tokenizer


def scripted_tool_caller(tokenizer, moves: tuple[str, ...]):
    """A LlamaForCausalLM whose next token depends only on the current one (attention and MLP
    outputs are zero, so the residual stream is the token's embedding): any token -> PREFIX ->
    one of `moves` (uniform) -> SUFFIX -> end of turn. PREFIX and SUFFIX are added tokens."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    prefix, suffix = '<tool_call>{"name": "make_move", "arguments": {"move": "', '"}}</tool_call>'
    tokenizer.add_tokens([prefix, suffix, *moves])  # moves the BPE already has stay as they are
    ids = lambda text: tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    move_ids = [ids(m) for m in moves]
    assert all(len(m) == 1 for m in move_ids), f"each move must be one token: {move_ids}"
    chain = [ids(prefix)[0], *(m[0] for m in move_ids), ids(suffix)[0], tokenizer.eos_token_id]
    assert len(set(chain)) == len(chain), chain
    hidden = 16
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=16, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096, rms_norm_eps=1e-6,
        tie_word_embeddings=False, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    # State k is the unit vector e_k; after the RMS norm it is e_k * sqrt(hidden).
    state_of = {chain[0]: 1, **{m[0]: 2 + i for i, m in enumerate(move_ids)}, chain[-2]: 2 + len(moves)}
    weight = 12.0 / math.sqrt(hidden)  # logit 12 for the scripted token(s), 0 for the rest
    with torch.no_grad():
        embed = torch.zeros(config.vocab_size, hidden)
        embed[:, 0] = 1.0  # state 0: any other token
        for token, state in state_of.items():
            embed[token] = 0.0
            embed[token, state] = 1.0
        model.model.embed_tokens.weight.copy_(embed)
        head = torch.zeros(config.vocab_size, hidden)
        head[chain[0], 0] = weight  # anything -> PREFIX
        for m in move_ids:
            head[m[0], 1] = weight  # PREFIX -> a move, uniformly
            head[chain[-2], state_of[m[0]]] = weight  # move -> SUFFIX
        head[tokenizer.eos_token_id, state_of[chain[-2]]] = weight  # SUFFIX -> end of turn
        model.lm_head.weight.copy_(head)
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.zero_()
            layer.mlp.down_proj.weight.zero_()
    return model


@pytest.mark.slow  # TRL's imports (~15 s of CPU) and the step
def test_grpo_trainer_trains_on_our_game(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is experimental in TRL
    from trl import GRPOConfig, GRPOTrainer

    from games.registry import make_game
    from interop.trl import seed_dataset

    tokenizer = tiny_tokenizer([make_game("kuhn_poker").rules])
    model = scripted_tool_caller(tokenizer, MOVES)
    head_before = model.lm_head.weight.detach().clone()

    make_env = environment_factory("kuhn_poker", opponents=["bot"], options={"hands": 1})
    envs: list[ArenaGameEnv] = []

    def factory() -> ArenaGameEnv:
        envs.append(make_env())
        return envs[-1]

    args = GRPOConfig(
        output_dir=str(tmp_path), max_steps=1, per_device_train_batch_size=SEEDS * GROUP, num_generations=GROUP,
        max_completion_length=768, max_tool_calling_iterations=4, learning_rate=1e-2, logging_steps=1,
        save_strategy="no", report_to="none", use_cpu=True, bf16=False, seed=1, shuffle_dataset=False,
    )
    trainer = GRPOTrainer(model, args=args, train_dataset=seed_dataset(SEEDS, first_seed=10),
                          processing_class=tokenizer, environment_factory=factory)
    trainer.train()

    assert trainer.state.global_step == 1
    assert not model.lm_head.weight.detach().equal(head_before)  # the optimizer step changed the model
    played = [e for e in envs if e.seed is not None]
    assert len(played) == SEEDS * GROUP
    # Every reward is the seat's outcome score of a finished hand, and TRL logged those rewards.
    rewards = [e.get_reward() for e in played]
    for env, reward in zip(played, rewards):
        assert env.view.done and env.record is not None and env.record.status == "finished"
        assert reward == env.record.outcome["scores"][0] == env.view.outcome["scores"][0]
    log = trainer.state.log_history[0]
    assert log["rewards/ArenaGameEnv/mean"] == pytest.approx(sum(rewards) / len(rewards))
    assert log["tools/call_frequency"] > 0 and log["tools/failure_frequency"] < 1
    # The model's moves reached the game: some hands were decided by a played move, not a forfeit.
    assert any("forfeit" not in env.view.outcome["reason"] for env in played)
    # A GRPO group shares its seed, hence its deal; rewards differ inside a group (a learning signal).
    by_seed: dict[int, list[ArenaGameEnv]] = {}
    for env in played:
        by_seed.setdefault(env.seed, []).append(env)
    assert sorted(by_seed) == [10, 11] and all(len(group) == GROUP for group in by_seed.values())
    for group in by_seed.values():
        assert len({tuple(e.state["game_state"]["cards"]) for e in group}) == 1
    assert any(len({e.get_reward() for e in group}) > 1 for group in by_seed.values())


def test_env_plays_a_seeded_hand_and_scores_its_outcome() -> None:
    make_env = environment_factory("kuhn_poker", opponents=["bot"], seat=1, options={"hands": 1})
    first, second = make_env(), make_env()
    intro = first.reset(seed=4, prompt=[{"role": "user", "content": ""}], my_column="ignored")
    assert intro == second.reset(seed=4)  # one deal per seed: a GRPO group sees one episode
    assert "Kuhn Poker" in intro and "Legal moves:" in intro and "`make_move`" in intro
    rejected = first.make_move("raise")
    assert "rejected" in rejected and "attempt(s) left" in rejected and not first.view.done
    while not first.view.done:
        text = first.make_move(first.view.legal_moves[-1])
    assert "The game is over" in text and f"Your score: {first.get_reward():g}" in text
    assert first.get_reward() == first.view.outcome["scores"][1] == first.record.outcome["scores"][1]
    assert first.record.policies[1] == "trl-player" and first.record.specs[0] == "bot"
    with pytest.raises(RuntimeError, match="game is over"):
        first.make_move("call")


def test_env_forfeits_an_abandoned_episode_by_the_games_rule() -> None:
    env = environment_factory("tictactoe", opponents=["bot"])()
    env.reset(seed=0)
    env.make_move("4")
    assert env.get_reward() == -1.0  # the model stopped calling make_move: a forfeit, below a loss (0)
    assert env.view.done and "forfeited" in env.view.outcome["reason"]


def test_bad_setups_fail_early_in_one_line() -> None:
    with pytest.raises(Exception, match="unknown game 'kuhn'"):
        environment_factory("kuhn")
    with pytest.raises(SeatEnvironmentError, match="seat 2 does not exist"):
        environment_factory("kuhn_poker", opponents=["bot"], seat=2)
    with pytest.raises(SeatEnvironmentError, match="unknown policy 'bott'"):
        environment_factory("kuhn_poker", opponents=["bott"])
    with pytest.raises(ValueError, match="needs opponents"):
        environment_factory("kuhn_poker", opponents=[])
    with pytest.raises(ValueError, match="human cannot play"):
        environment_factory("kuhn_poker", opponents=["human"])
    env = ArenaGameEnv("kuhn_poker", opponents=["bot"])
    with pytest.raises(ValueError, match="no `seed` column"):
        env.reset(prompt="")
    with pytest.raises(ValueError, match="must be integers"):
        env.reset(seed="deal")
