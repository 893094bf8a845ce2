"""What could self-play reach in Kuhn poker with this many hands, if state separation were free?

    python -m bench.tabular_reference                       # run E's budget and three larger ones
    python -m bench.tabular_reference --budget 31x4 --seeds 50

bench/strategy.py trains a LoRA shared by all 12 information sets and plays 16 hands per step.
This bench runs the same self-play with one free logit per (information set, move) instead
(trainer.tabular_selfplay): the same start (the base model's strategy at the training temperature),
the same GRPO groups (a deal, both seats), the same per-decision loss (KL to the start and the
entropy bonus at bench/strategy's defaults) and Adam. For each budget ("STEPSxDEALS", 4 hands per
deal) it sweeps Adam's learning rate over --seeds runs and reports the exploitability ratio
(final over base) of the best rate's median run, and how many of its runs reach the target 0.5.

It is a favourable reference: its learning rate is picked after the fact, per budget. Ends with
one JSON line; the headline `tabular_reference_ratio` is the first budget's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from arena.policy import make_policy
from evaluation.exploitability import build_tree, evaluate, policy_strategy
from games.registry import make_game
from trainer.tabular_selfplay import reference_figures, reference_sweep

HANDS_PER_DEAL = 4  # bench/strategy's --group-size


def budget(text: str) -> tuple[int, int]:
    steps, _, deals = text.partition("x")
    if not (steps.isdigit() and deals.isdigit() and int(steps) > 0 and int(deals) > 0):
        raise argparse.ArgumentTypeError(f"a budget is STEPSxDEALS, like 31x4; got {text!r}")
    return int(steps), int(deals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=budget, action="append",
                        help="STEPSxDEALS, repeatable (default: 31x4, run E's 31 steps of 16 hands, then 31x16, 124x4, 124x16)")
    parser.add_argument("--temperature", type=float, default=5.0, help="the base's choice temperature (bench/strategy trains at 5)")
    parser.add_argument("--kl-coef", type=float, default=0.1)
    parser.add_argument("--entropy-coef", type=float, default=0.02)
    parser.add_argument("--seeds", type=int, default=20, help="runs per learning rate")
    args = parser.parse_args()
    budgets = args.budget or [(31, 4), (31, 16), (124, 4), (124, 16)]

    tree = build_tree(lambda: make_game("kuhn_poker", 2, hands=1))
    base = make_policy(f"local,engine=hf,mode=choice,obs=state,temperature={args.temperature:g}")
    start = asyncio.run(policy_strategy(tree, base))
    base_exploitability = evaluate(tree, start).exploitability
    print(f"base model at temperature {args.temperature:g}: exploitability {base_exploitability:.4f}", flush=True)

    results = []
    for steps, deals in budgets:
        started = time.perf_counter()
        finals = reference_sweep(tree, start, steps, deals, HANDS_PER_DEAL, args.kl_coef, args.entropy_coef, seeds=args.seeds)
        figures = reference_figures(finals, base_exploitability)
        hands = steps * deals * HANDS_PER_DEAL
        print(f"{steps} steps x {deals * HANDS_PER_DEAL} hands ({hands} hands): best lr {figures['tabular_reference_learning_rate']}, "
              f"median ratio {figures['tabular_reference_ratio']:.3f}, {figures['tabular_reference_reaching_target']:.0%} of runs <= 0.5; "
              f"by lr [median, q1, q3]: {figures['tabular_reference_ratio_by_lr']}  ({time.perf_counter() - started:.1f} s)", flush=True)
        results.append({"steps": steps, "hands_per_step": deals * HANDS_PER_DEAL, **figures})

    print(json.dumps({
        "tabular_reference_ratio": results[0]["tabular_reference_ratio"],
        "tabular_reference_reaching_target": results[0]["tabular_reference_reaching_target"],
        "exploitability_base": round(base_exploitability, 4),
        "seeds": args.seeds, "kl_coef": args.kl_coef, "entropy_coef": args.entropy_coef,
        "budgets": results,
    }))


if __name__ == "__main__":
    main()
