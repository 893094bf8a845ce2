"""Scoring legal moves after one prompt pass: a prompt's moves run as one row under a 4D mask
(arena/llm/engines/scoring.py), after the prompt's cache or in the prompt's own forward, and must
score exactly what a plain forward of prompt + move does. float32 log-softmax over a 49k
vocabulary, the prompt once through a KV cache or under a 4D mask: 1e-4 holds."""

from __future__ import annotations

import torch

from arena.llm.engines import open_engine
from arena.llm.engines.scoring import option_token_logprobs, prompt_and_option_token_logprobs


def _prompts_and_moves(engine) -> tuple[list[list[int]], list[list[list[int]]]]:
    prompts = [engine.encode([{"role": "user", "content": text}]) for text in ("Kuhn poker. Your card: K. Check or bet?",
                                                                              "Tic-Tac-Toe, X to move on an empty board. Pick a cell 1 to 9.")]
    options = [engine.option_ids(["check", "bet", "fold it all"]), engine.option_ids(["5", "1", "a long answer here"])]
    return prompts, options


def _assert_plain(model, prompts, options, scored) -> None:
    row = 0
    for prompt, moves in zip(prompts, options):
        for move in moves:
            plain = model(input_ids=torch.tensor([prompt + move])).logits[0].float().log_softmax(-1)
            expected = plain[len(prompt) - 1 : -1].gather(1, torch.tensor(move).unsqueeze(1)).squeeze(1)
            got = scored[row, : len(move)]
            assert torch.allclose(got, expected, atol=1e-4), (move, got, expected)
            assert torch.all(scored[row, len(move):] == 0)
            row += 1
    assert row == scored.shape[0]


def test_moves_scored_in_one_row_equal_a_plain_forward_of_each():
    engine = open_engine("local", "hf")
    model, pad = engine.model, engine.tokenizer.pad_token_id
    prompts, options = _prompts_and_moves(engine)
    width = max(len(p) for p in prompts)
    ids = torch.full((2, width), pad)
    attention = torch.zeros((2, width), dtype=torch.long)
    for row, prompt in enumerate(prompts):  # left padded, as the engine batches prompts
        ids[row, width - len(prompt):] = torch.tensor(prompt)
        attention[row, width - len(prompt):] = 1
    positions = (attention.cumsum(-1) - 1).clamp(min=0)
    with torch.inference_mode(), engine.model_lock:
        out = model(input_ids=ids, attention_mask=attention, position_ids=positions, use_cache=True)
        first = out.logits[:, -1].float().log_softmax(-1)
        scored = option_token_logprobs(model, first, attention, out.past_key_values, options, pad, lambda owner: {})
        _assert_plain(model, prompts, options, scored)


def test_moves_scored_in_the_prompts_own_forward_equal_a_plain_forward_of_each():
    """One forward for prompts of different lengths and their moves (the learner's layout where no
    prompt prefix is shared): the left-padded prompt, then every move under the 4D mask."""
    engine = open_engine("local", "hf")
    model, pad = engine.model, engine.tokenizer.pad_token_id
    prompts, options = _prompts_and_moves(engine)
    assert len(prompts[0]) != len(prompts[1])  # the padding is exercised
    with torch.inference_mode(), engine.model_lock:
        scored = prompt_and_option_token_logprobs(model, prompts, options, pad, model.device, lambda owner: {})
        _assert_plain(model, prompts, options, scored)
