"""What could self-play reach in Kuhn poker (or Leduc Hold'em) with this many hands, if state
separation were free?

    python -m bench.experiments.tabular_reference                       # run E's budget and three larger ones
    python -m bench.experiments.tabular_reference --budget 31x4 --seeds 50
    python -m bench.experiments.tabular_reference --game leduc_holdem --state-baseline --cosine   # Leduc's bench budget, 8x64, and larger

bench/strategy.py trains a LoRA shared by all 12 information sets (Leduc: 288) and played 16 hands
per step when this was written (now 1,024 in Kuhn, 256 in Leduc).
This bench runs the same self-play with one free logit per (information set, move) instead
(trainer.tabular_selfplay): the same start (the base model's strategy at the training temperature),
the same GRPO groups (a deal, both seats), the same per-decision loss (KL to the start and the
entropy bonus at bench/strategy's defaults) and Adam. For each budget ("STEPSxDEALS", 4 hands per
deal) it sweeps Adam's learning rate over --seeds runs and reports the exploitability ratio
(final over base) of the best rate's median run, and how many of its runs reach the target (Kuhn
0.5; Leduc 0.8, issue 29's aim). --state-baseline and --cosine add what bench/strategy has used
since (the per-information-set baseline, a cosine to a tenth of the rate); --private-contrast L
centres each move's advantage across the private cards of its public state (algorithm.private_contrast).

It is a favourable reference: its learning rate is picked after the fact, per budget. Ends with
one JSON line; the headline `tabular_reference_ratio` is the first budget's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from arena.policy import make_policy
from bench.head_to_head import GAME_OPTIONS
from evaluation.exploitability import build_tree, evaluate, policy_strategy
from games.registry import make_game
from trainer.tabular_selfplay import reference_figures, reference_sweep

HANDS_PER_DEAL = 4  # bench/strategy's --group-size
BUDGETS = {"kuhn_poker": [(31, 4), (31, 16), (124, 4), (124, 16)],  # run E's 31 steps of 16 hands first
           "leduc_holdem": [(8, 64), (8, 256), (32, 64), (60, 256)]}  # bench/strategy's Leduc budget first
TARGET_RATIO = {"kuhn_poker": 0.5, "leduc_holdem": 0.8}


def budget(text: str) -> tuple[int, int]:
    steps, _, deals = text.partition("x")
    if not (steps.isdigit() and deals.isdigit() and int(steps) > 0 and int(deals) > 0):
        raise argparse.ArgumentTypeError(f"a budget is STEPSxDEALS, like 31x4; got {text!r}")
    return int(steps), int(deals)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=sorted(BUDGETS), default="kuhn_poker")
    parser.add_argument("--budget", type=budget, action="append",
                        help="STEPSxDEALS, repeatable (default Kuhn: 31x4, run E's 31 steps of 16 hands, then 31x16, 124x4, 124x16; "
                             "Leduc: 8x64, the bench's, then 8x256, 32x64, 60x256)")
    parser.add_argument("--temperature", type=float, default=5.0, help="the base's choice temperature (bench/strategy trains at 5)")
    parser.add_argument("--kl-coef", type=float, default=0.1)
    parser.add_argument("--entropy-coef", type=float, default=0.02)
    parser.add_argument("--seeds", type=int, default=20, help="runs per learning rate")
    parser.add_argument("--state-baseline", action="store_true", help="centre each decision on its information set's others (algorithm.state_baseline)")
    parser.add_argument("--private-contrast", type=float, default=0.0,
                        help="centre each move's advantage across the private cards of its public state by this share (algorithm.private_contrast)")
    parser.add_argument("--cosine", action="store_true", help="the rate falls on a cosine to a tenth of itself (lr_schedule: cosine)")
    args = parser.parse_args()
    if not 0 <= args.private_contrast <= 1:
        parser.error(f"--private-contrast must be in [0, 1], got {args.private_contrast}")
    budgets = args.budget or BUDGETS[args.game]
    target = TARGET_RATIO[args.game]

    tree = build_tree(lambda: make_game(args.game, 2, **GAME_OPTIONS[args.game]))
    base = make_policy(f"local,engine=hf,mode=choice,obs=state,temperature={args.temperature:g}")
    start = asyncio.run(policy_strategy(tree, base))
    base_exploitability = evaluate(tree, start).exploitability
    print(f"base model at temperature {args.temperature:g}: exploitability {base_exploitability:.4f}", flush=True)

    results = []
    for steps, deals in budgets:
        started = time.perf_counter()
        finals = reference_sweep(tree, start, steps, deals, HANDS_PER_DEAL, args.kl_coef, args.entropy_coef, seeds=args.seeds,
                                 state_baseline=args.state_baseline, lr_final_fraction=0.1 if args.cosine else None,
                                 private_contrast=args.private_contrast)
        figures = reference_figures(finals, base_exploitability, target)
        hands = steps * deals * HANDS_PER_DEAL
        print(f"{steps} steps x {deals * HANDS_PER_DEAL} hands ({hands} hands): best lr {figures['tabular_reference_learning_rate']}, "
              f"median ratio {figures['tabular_reference_ratio']:.3f}, {figures['tabular_reference_reaching_target']:.0%} of runs <= {target}; "
              f"by lr [median, q1, q3]: {figures['tabular_reference_ratio_by_lr']}  ({time.perf_counter() - started:.1f} s)", flush=True)
        results.append({"steps": steps, "hands_per_step": deals * HANDS_PER_DEAL, **figures})

    print(json.dumps({
        "game": args.game, "target_ratio": target, "state_baseline": args.state_baseline, "cosine": args.cosine, "private_contrast": args.private_contrast,
        "tabular_reference_ratio": results[0]["tabular_reference_ratio"],
        "tabular_reference_reaching_target": results[0]["tabular_reference_reaching_target"],
        "exploitability_base": round(base_exploitability, 4),
        "seeds": args.seeds, "kl_coef": args.kl_coef, "entropy_coef": args.entropy_coef,
        "budgets": results,
    }))


if __name__ == "__main__":
    main()
