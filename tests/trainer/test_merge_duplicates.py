"""Identical turns trained as one weighted sample (algorithm.merge_duplicates): the same update."""

import random

import pytest
import torch

from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, Sample, merge_duplicates, write_initial_adapter


def test_turns_merge_by_prompt_action_and_sign_of_advantage():
    a = dict(prompt_ids=[1, 2, 3], completion_ids=[7, 0])
    turns = [
        Sample(**a, advantage=1.0), Sample(**a, advantage=3.0), Sample(**a, advantage=-2.0),
        Sample([1, 2, 3], [8, 0], advantage=1.0),  # another action
        Sample([1, 2, 4], [7, 0], advantage=1.0),  # another prompt
        Sample(**a, advantage=0.0), Sample(**a, advantage=0.0),
        Sample([1, 2, 3], [7, 0], 1.0, option_ids=[[7, 0], [8, 0]], chosen=0, choice_temperature=5.0),  # a choice draw
    ]
    merged = merge_duplicates(turns)
    assert [(m.advantage, m.weight) for m in merged] == [(2.0, 2.0), (-2.0, 1.0), (1.0, 1.0), (1.0, 1.0), (0.0, 2.0), (1.0, 1.0)]
    assert turns[0].weight == 1.0 and turns[0].advantage == 1.0  # the turns themselves are untouched
    assert sum(m.weight for m in merge_duplicates(merged)) == len(turns)  # merging again changes nothing
    assert [(m.advantage, m.weight) for m in merge_duplicates(merged)] == [(m.advantage, m.weight) for m in merged]


@pytest.mark.slow
def test_an_update_on_merged_turns_equals_the_update_on_the_turns(tmp_path):
    from arena.llm.engines import open_engine

    engine = open_engine("local", "hf")
    tok = engine.tokenizer
    prompts = [list(tok.apply_chat_template([{"role": "user", "content": f"Kuhn poker. Your card: {c}. Check or bet?"}],
                                           add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]) for c in "JK"]
    moves = [tok(m, add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for m in ("check", "bet")]
    draws = [(0, 1, 1.0), (0, 1, 0.5), (0, 1, -1.5), (1, 1, 2.0), (1, 0, -0.5), (1, 0, -1.0), (0, 0, 0.25), (1, 1, 1.0)]

    def turns() -> list[Sample]:
        return [Sample(prompts[p], moves[m], adv, option_ids=moves, chosen=m, choice_temperature=3.0) for p, m, adv in draws]

    updated, statistics = [], []
    for merge in (False, True):
        folder = tmp_path / f"merge-{merge}"
        write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), folder, seed=5)
        settings = AlgorithmSettings(
            epochs=2, minibatch_size=16, micro_batch_size=16, learning_rate=1e-2, loss_norm="sequence",
            kl_coef=0.1, entropy_coef=0.05, merge_duplicates=merge,
        )
        learner = Learner(engine, folder, settings, temperature=1.0, max_new_tokens=4)
        stats = learner.update(turns(), random.Random(0))
        assert (stats["train/turns"], stats["train/samples"]) == ((8, 5) if merge else (8, 8))
        statistics.append(stats)
        # the weights, and the gradient of the second epoch's step (ratios no longer 1)
        updated.append({k: (p.detach().clone(), p.grad.clone()) for k, p in learner.params.items()})
    for key, (weights, grad) in updated[0].items():
        # Merged and unmerged rows sum the same float32 products in another order. Each gradient
        # element is a sum over ~10^4 products (tokens x LoRA rank x hidden), whose rounding grows
        # like sqrt(n) * eps32 (~1e-5) of the largest terms: elements near 0 are held to 1e-4 of
        # the tensor's own scale, not to a fixed 1e-7 (which 1 of 2304 elements once missed).
        scale = float(grad.abs().max())
        torch.testing.assert_close(updated[1][key][1], grad, atol=1e-4 * scale, rtol=1e-3)
        # Adam moves every weight by about lr = 1e-2 per step, and turns float rounding in a
        # gradient near 0 into up to a step's worth: the weights agree to a tenth of a step
        torch.testing.assert_close(updated[1][key][0], weights, atol=1e-3, rtol=0)
    assert any(w.abs().sum() > 0 for k, (w, _) in updated[0].items() if "lora_B" in k)  # the update did something
    # and the reported statistics are means over the turns either way (float32 sums: 1e-4 relative)
    for name in ("train/kl", "train/entropy", "train/clip_fraction", "train/approx_kl"):
        assert statistics[1][name] == pytest.approx(statistics[0][name], rel=1e-4, abs=1e-7), name
