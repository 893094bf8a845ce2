"""Self-play step times of one fixed workload, on whichever trainer is importable: before and after a change.

    python bench/experiments/step_times.py                                  # this checkout
    git worktree add /tmp/before 1b650a0
    PYTHONPATH=/tmp/before python bench/experiments/step_times.py          # the trainer as it was at 1b650a0
    python bench/experiments/step_times.py --workload strategy --game kuhn_poker   # bench.strategy's own step

Kuhn poker (16 deals x 4 hands = 64 hands per step) and Tic-Tac-Toe (4 x 4 = 16 games per step) in
choice mode, state prompts, the settings bench.strategy ran before issue 29 (lr 1e-3, KL 0.1 to the
base, entropy bonus 0.02, identical turns merged, one epoch, micro-batches of 16). Only keys every
trainer version since 2026-11-24 reads, so the same file times the old code and the new; run as a
file, not with -m, so that PYTHONPATH decides which trainer it imports. Prints each step's rollout,
learner and total seconds, their medians over --steps, and one JSON line.

`--workload strategy` times bench.strategy's own step instead (its defaults for the game: Kuhn's
1,024 hands, Leduc's 256, Tic-Tac-Toe's 16 games against lagged checkpoints), from the bench of
whichever checkout PYTHONPATH names, so its config is that version's too (bench.strategy exists
from 2026-11-25 on). The first step fills the choice memo from nothing, as a run's first does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trainer
from trainer.config import parse_config
from trainer.run import Trainer

CHECKOUT = Path(trainer.__file__).resolve().parent.parent  # the checkout whose trainer (and bench) is timed

WORKLOADS = {
    "kuhn_poker": {"options": {"hands": 1}, "temperature": 5.0, "groups": 16},
    "tictactoe": {"options": {}, "temperature": 1.0, "groups": 4},
}


def config(game: str, runs: Path, steps: int) -> dict:
    workload = WORKLOADS[game]
    return {
        "name": f"step-times-{game}", "output_dir": str(runs), "base": "local", "seed": 0, "steps": steps,
        "games": [{"id": game, "options": workload["options"]}],
        "opponents": [{"kind": "self"}],
        "rollout": {"mode": "choice", "engine": "hf", "obs": "state", "temperature": workload["temperature"],
                    "groups_per_step": workload["groups"], "group_size": 4, "in_flight": workload["groups"] * 4, "max_new_tokens": 4},
        "rewards": {"terms": [{"kind": "outcome", "mode": "score"}]},
        "algorithm": {"advantage": "grpo", "loss_norm": "sequence", "epochs": 1, "minibatch_size": 64, "micro_batch_size": 16,
                      "learning_rate": 1e-3, "kl_coef": 0.1, "kl_reference": "base", "entropy_coef": 0.02, "merge_duplicates": True},
        "checkpoint": {"every": 100_000, "register_in_league": False},
        "logging": {"wandb": False},
    }


def strategy_config(game: str, runs: Path, steps: int) -> dict:
    """bench.strategy's configuration for `game`, as that checkout's bench builds it: the bench
    package is not installed, so it is imported from the checkout the trainer came from."""
    if str(CHECKOUT) not in sys.path:
        sys.path.insert(0, str(CHECKOUT))
    from bench.strategy import build_config, defaults

    return build_config(defaults(game, runs=runs, steps=steps, name=f"step-times-{game}"))


def time_steps(game: str, steps: int, workload: str = "fixed") -> dict:
    make_config = strategy_config if workload == "strategy" else config
    with tempfile.TemporaryDirectory(prefix="step-times-") as runs:
        run = Trainer(parse_config(make_config(game, Path(runs), steps), "step-times"))
        run.setup()
        rows = []
        try:
            for _ in range(steps):
                started = time.perf_counter()
                report = asyncio.run(run.train_step())
                total = time.perf_counter() - started
                m = report.metrics
                rows.append((m.get("rollout/seconds", float("nan")), m.get("train/seconds", float("nan")), total))
                print(f"{game} step {report.step}: rollout {rows[-1][0]:.1f} s  learner {rows[-1][1]:.1f} s  total {total:.1f} s", flush=True)
        finally:
            run.close()
    median = [round(statistics.median(column), 2) for column in zip(*rows)]
    return {"rollout_s": median[0], "learner_s": median[1], "step_s": median[2], "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=[*WORKLOADS, "leduc_holdem", "both"], default="both",
                        help="both: Kuhn poker and Tic-Tac-Toe; Leduc Hold'em only with --workload strategy")
    parser.add_argument("--steps", type=int, default=3, help="steps timed per game (medians reported)")
    parser.add_argument("--workload", choices=["fixed", "strategy"], default="fixed",
                        help="fixed: the settings of before issue 29 (64 Kuhn hands, 16 games); strategy: bench.strategy's own step")
    args = parser.parse_args()
    if args.game == "leduc_holdem" and args.workload != "strategy":
        parser.error("--game leduc_holdem needs --workload strategy (the fixed workload has no Leduc settings)")
    commit = subprocess.run(["git", "-C", str(CHECKOUT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"trainer from {CHECKOUT} at {commit}", flush=True)
    games = list(WORKLOADS) if args.game == "both" else [args.game]
    figures = {"trainer_commit": commit, "workload": args.workload, **{game: time_steps(game, args.steps, args.workload) for game in games}}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
