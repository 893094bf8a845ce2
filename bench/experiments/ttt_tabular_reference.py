"""How many games a step does Tic-Tac-Toe self-play need to pass on every seed, if positions did
not share weights?

    python -m bench.experiments.ttt_tabular_reference                      # the bench's recipe at 16..256 games a step
    python -m bench.experiments.ttt_tabular_reference --groups 4 --groups 16 --lagged 0 --seeds 50
    python -m bench.experiments.ttt_tabular_reference --groups 2 --group-size 8 --kl-target 0

bench.strategy --game tictactoe trains a LoRA on 16 games a step (4 groups of 4) for 20 steps and
passes when the draw-or-win rate against the minimax bot rises with the two 95% Wilson intervals
of 1,600 games apart; two seeds of three pass at any one setting. This runs the same recipe with
one free logit per board instead (trainer.tabular_tictactoe: the same groups, lagged opponents,
advantages, per-board baseline, KL controller, schedule and average of iterates), from the uniform
mover (0.127 exactly against the bot; the shipped model at the bench's temperature is at 0.138),
for --seeds runs at each number of groups and each Adam learning rate, and scores each run's
reported policy (the average of iterates) exactly.

A run "passes" when its exact rate would pass the bench's test if 1,600 games a side came out at
their expectation: the Wilson interval at the final rate lies above the start's. For each budget
it prints the best learning rate's share of passing seeds, of seeds ending below the start, and
the median gain. Ends with one JSON line; the headline `ttt_tabular_pass_share` is the first
budget's (the bench's 4 groups unless --groups says otherwise).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from evaluation.report_card import wilson
from trainer.tabular_tictactoe import TicTacToeSettings, exact_draw_or_win, table_policy, tabular_tictactoe, uniform

EVAL_GAMES = 1600  # bench.strategy's Tic-Tac-Toe games a side
LEARNING_RATES = (0.1, 0.3, 1.0, 3.0)


def passes(start: float, final: float, games: int = EVAL_GAMES) -> bool:
    """Whether the bench's test (Wilson intervals apart, `games` a side) passes when both samples
    land on their expectations."""
    return wilson(final * games, games)[0] > wilson(start * games, games)[1]


def sweep(settings: dict, groups: int, learning_rates: tuple[float, ...], seeds: int, start_rate: float) -> dict:
    by_lr = {}
    for lr in learning_rates:
        finals = []
        for seed in range(seeds):
            run = tabular_tictactoe(TicTacToeSettings(learning_rate=lr, groups=groups, seed=seed, **settings))
            finals.append(exact_draw_or_win(table_policy(run.average, uniform))["alternating"])
        by_lr[lr] = {
            "pass_share": round(sum(passes(start_rate, f) for f in finals) / seeds, 3),
            "worse_share": round(sum(f < start_rate for f in finals) / seeds, 3),
            "median_gain": round(statistics.median(finals) - start_rate, 4),
            "worst_gain": round(min(finals) - start_rate, 4),
        }
    best = max(by_lr, key=lambda lr: (by_lr[lr]["pass_share"], by_lr[lr]["median_gain"]))
    return {"groups": groups, "best_learning_rate": best, **by_lr[best], "by_learning_rate": {str(k): v for k, v in by_lr.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--groups", type=int, action="append", help="groups a step, repeatable (default: 4, 8, 16, 32, 64)")
    parser.add_argument("--group-size", type=int, default=4, help="games a group (the bench's 4)")
    parser.add_argument("--learning-rate", type=float, action="append", help=f"Adam's rate on the logits, repeatable (default: {', '.join(map(str, LEARNING_RATES))})")
    parser.add_argument("--steps", type=int, default=20, help="steps a run (bench.strategy's Tic-Tac-Toe budget)")
    parser.add_argument("--seeds", type=int, default=20, help="runs per budget and rate")
    parser.add_argument("--lagged", type=float, default=0.5, help="share of groups against earlier checkpoints (the bench's 0.5)")
    parser.add_argument("--kl-target", type=float, default=0.25, help="the KL controller's target; 0 for a fixed coefficient")
    parser.add_argument("--no-state-baseline", action="store_true", help="centre advantages on the group only")
    args = parser.parse_args()
    if any(g < 1 for g in args.groups or ()) or min(args.steps, args.seeds, args.group_size) < 1:
        parser.error("--groups, --group-size, --steps and --seeds must be at least 1")
    budgets = args.groups or [4, 8, 16, 32, 64]
    settings = {"steps": args.steps, "group_size": args.group_size, "lagged": args.lagged, "kl_target": args.kl_target or None, "state_baseline": not args.no_state_baseline}

    start_rate = exact_draw_or_win(uniform)["alternating"]
    print(f"start: the uniform mover, {start_rate:.4f} exactly against the bot; a pass needs "
          f"{min(r / 1000 for r in range(1000) if passes(start_rate, r / 1000)):.3f}", flush=True)
    results = []
    for groups in budgets:
        started = time.perf_counter()
        result = sweep(settings, groups, tuple(args.learning_rate or LEARNING_RATES), args.seeds, start_rate)
        print(f"{groups * args.group_size} games a step ({groups} groups of {args.group_size}) x {args.steps} steps: best lr {result['best_learning_rate']}, "
              f"{result['pass_share']:.0%} of {args.seeds} seeds pass, {result['worse_share']:.0%} end below the start, "
              f"median gain {result['median_gain']:+.4f} (worst {result['worst_gain']:+.4f}); by lr: "
              + ", ".join(f"{lr}: {v['pass_share']:.0%} pass, median {v['median_gain']:+.4f}" for lr, v in result["by_learning_rate"].items())
              + f"  ({time.perf_counter() - started:.0f} s)", flush=True)
        results.append(result)

    print(json.dumps({
        "ttt_tabular_pass_share": results[0]["pass_share"],
        "ttt_tabular_games_per_step": budgets[0] * args.group_size,
        "start_rate": round(start_rate, 4), "seeds": args.seeds, **{k: v for k, v in settings.items()},
        "budgets": results,
    }))


if __name__ == "__main__":
    main()
