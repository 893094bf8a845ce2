"""How much of a LoRA update can tell the private cards apart, per prompt variant.

    python -m bench.experiments.card_gradient_cosine --game leduc_holdem --states 6
    python -m bench.experiments.card_gradient_cosine --game kuhn_poker --prompt default --prompt private-last

Self-play trains one LoRA for every information set. Two information sets that differ only in the
seat's private card (same public state, same legal moves) should get different moves, but if the
gradients of a move's draw log-prob at the two are nearly parallel, every update moves both alike:
the card-blind drift of the Leduc runs (docs/experiments/leduc-selfplay.md). This measures, for
the shipped model with a fresh LoRA (zero update, so at the base), the cosine between those
gradients for every legal move and every pair of cards of a public state, for each `--prompt`
variant (the harness's prompt=, as bench.strategy --prompt trains with it). For the two gradients'
unit vectors, |u1 - u2|^2 = 2 (1 - cosine): the part of an update that can move the two cards
apart, as against the part that moves them alike. The prompts are choice mode,
state observations, as bench.strategy builds them. Ends with one JSON line:
`cosine_median_<variant>` and `one_minus_cosine_median_<variant>` per variant, and
`separable_ratio`: the last variant's 1 - cosine median over the first's, from unrounded values.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import tempfile
from pathlib import Path

import torch

from arena.llm import prompt_variants
from arena.llm.engines import open_engine
from arena.llm.prompting import Mode
from arena.policy import make_policy
from evaluation.exploitability import build_tree
from games.registry import make_game
from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, Sample, write_initial_adapter
from trainer.tabular_selfplay import public_states

CHOICE_TEMPERATURE = 5.0  # bench.strategy's draw temperature in poker


def card_groups(tree, count: int, seed: int) -> list[list]:
    """`count` public states (drawn with `seed`) with every information set that shares each."""
    groups: dict[tuple, list] = {}
    for key, public in public_states(tree).items():
        groups.setdefault(public, []).append(key)
    shared = sorted((keys for keys in groups.values() if len(keys) >= 2), key=lambda keys: str(sorted(keys)))
    return random.Random(seed).sample(shared, min(count, len(shared)))


def lora_gradient(learner: Learner, sample: Sample) -> torch.Tensor:
    """The LoRA gradient of `sample`'s action log-prob (a choice sample: its draw's), flattened."""
    params = list(learner.params.values())
    learner.model.set_adapter(learner.name)
    logps, _, _ = learner._action_logps([sample])
    grads = torch.autograd.grad(logps[0, 0], params, allow_unused=True)
    return torch.cat([(g if g is not None else torch.zeros_like(p)).flatten() for g, p in zip(grads, params)])


def move_gradients(learner: Learner, engine, policy, info, variant) -> list[torch.Tensor]:
    """The LoRA gradient of each legal move's draw log-prob (softmax of the moves' log-probs / T)."""
    view = prompt_variants.view(variant, info.request)
    prompt_ids = engine.encode(policy.build_prompt(view.request, Mode.CHOICE, view.variant).messages)
    option_ids = engine.option_ids(list(info.moves))
    return [lora_gradient(learner, Sample(prompt_ids, option_ids[j], 1.0, option_ids=option_ids, chosen=j, choice_temperature=CHOICE_TEMPERATURE))
            for j in range(len(info.moves))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=["kuhn_poker", "leduc_holdem"], default="leduc_holdem")
    parser.add_argument("--prompt", action="append", default=None, help="a prompt variant to measure; repeat for several (default: default and private-last)")
    parser.add_argument("--states", type=int, default=6, help="public states drawn (Kuhn has 6)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    variants = [prompt_variants.PromptVariant.parse(text) for text in args.prompt or ["default", "private-last"]]

    tree = build_tree(lambda: make_game(args.game, 2, hands=1))
    groups = card_groups(tree, args.states, args.seed)
    policy = make_policy("local,engine=hf,mode=choice,obs=state")  # only to build the prompts a match sends
    engine = open_engine("local", "hf")
    cosines: dict[str, list[float]] = {v.name: [] for v in variants}
    with tempfile.TemporaryDirectory() as folder:
        adapter = Path(folder) / "live"
        write_initial_adapter("local", LoraSettings(), adapter, args.seed)
        learner = Learner(engine, adapter, AlgorithmSettings(loss_norm="sequence"), temperature=1.0, max_new_tokens=4)
        for n, keys in enumerate(groups, 1):
            for variant in variants:
                grads = [move_gradients(learner, engine, policy, tree.infosets[key], variant) for key in keys]
                for a, b in itertools.combinations(grads, 2):
                    cosines[variant.name] += [float(torch.nn.functional.cosine_similarity(x, y, dim=0)) for x, y in zip(a, b)]
            print(f"public state {n}/{len(groups)}: " + ", ".join(
                f"{name} median {statistics.median(values):.4f}" for name, values in cosines.items()), flush=True)
    figures: dict[str, object] = {"game": args.game, "public_states": len(groups), "pairs": len(next(iter(cosines.values())))}
    for name, values in cosines.items():
        figures[f"cosine_median_{name}"] = round(statistics.median(values), 4)
        figures[f"cosine_min_{name}"] = round(min(values), 4)
        figures[f"one_minus_cosine_median_{name}"] = round(1 - statistics.median(values), 6)
    first, last = (1 - statistics.median(values) for values in (cosines[variants[0].name], cosines[variants[-1].name]))
    figures["separable_ratio"] = round(last / first, 2) if first > 0 else None
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
