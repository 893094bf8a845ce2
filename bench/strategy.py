"""Does self-play teach strategy? Kuhn poker in choice mode, measured by exact exploitability.

    python bench/strategy.py                       # 45 minutes of self-play on 2 cores, 400 eval hands
    python bench/strategy.py --minutes 5           # a short run (say so when you quote it)

The shipped SmolLM2 + a fresh LoRA plays Kuhn poker against itself, one hand per episode, in
choice mode (each move drawn among the legal ones by the model's own probability of it, so every
reply is legal and only strategy is left to learn), rewarded by the chips it wins. After every
step the live adapter's exact exploitability is computed (arena.exploitability: all 12
information sets scored in one engine batch). At the end: the base's and the final adapter's
exploitability, and --eval-hands sampled hands of the final adapter against the base and
against `bot` (the equilibrium), seats alternating; chips per hand with a 95% normal interval,
and the exact expected chips beside them. Plots the curve, ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.exploitability import build_tree, chips_against, evaluate, policy_strategy, uniform_strategy  # noqa: E402
from arena.match import play_match  # noqa: E402
from arena.policy import Policy, make_policy  # noqa: E402
from games.registry import make_game  # noqa: E402
from trainer.config import parse_config  # noqa: E402
from trainer.run import Trainer  # noqa: E402

GAME = "kuhn_poker"
STEP_GROWTH = 1.5  # a step starts only if 1.5x the longest of the last three still fits the budget


def build_config(args: argparse.Namespace) -> dict:
    """Self-play only (both seats trained), GRPO groups of one deal (same seed), chips as reward."""
    return {
        "name": args.name,
        "output_dir": str(args.runs),
        "base": "local",
        "seed": args.seed,
        "steps": 100_000,  # the time budget stops training
        "games": [{"id": GAME, "options": {"hands": 1}}],
        "opponents": [{"kind": "self"}],
        "rollout": {
            "mode": "choice",
            "obs": "state",
            "temperature": args.temperature,
            "groups_per_step": args.groups,
            "group_size": args.group_size,
            "in_flight": args.groups * args.group_size,
            "max_new_tokens": 4,
        },
        "rewards": {"terms": [{"kind": "outcome", "mode": "score"}]},
        "algorithm": {
            "advantage": "grpo",
            "loss_norm": "sequence",  # a move is one decision, however many tokens it has
            "epochs": 2,
            "minibatch_size": 64,
            "micro_batch_size": 16,
            "learning_rate": args.learning_rate,
        },
        "checkpoint": {"every": 100_000, "register_in_league": False},
        "logging": {"wandb": False},
    }


def choice_policy(adapter: str | None, temperature: float, name: str) -> Policy:
    spec = f"hf:local+{adapter}" if adapter else "local"
    policy = make_policy(f"{spec},mode=choice,obs=state,temperature={temperature:g}")
    policy.name = name
    return policy


async def train(args: argparse.Namespace, tree: object) -> tuple[Trainer, Path, list[tuple[int, float]], float]:
    config = parse_config(build_config(args), "bench")
    trainer = Trainer(config)
    trainer.setup()
    live = choice_policy(str(trainer.live_dir), args.temperature, "live")  # the learner's own weights
    curve = [(0, evaluate(tree, await policy_strategy(tree, live)).exploitability)]
    print(f"step 0: exploitability {curve[0][1]:.4f}", flush=True)
    started = time.perf_counter()
    deadline = started + args.minutes * 60
    durations: list[float] = []
    while time.perf_counter() + STEP_GROWTH * max(durations[-3:], default=0.0) < deadline:
        step_started = time.perf_counter()
        report = await trainer.train_step()
        curve.append((report.step, evaluate(tree, await policy_strategy(tree, live)).exploitability))
        durations.append(time.perf_counter() - step_started)
        m = report.metrics
        print(f"step {report.step}: exploitability {curve[-1][1]:.4f}  reward {m.get('reward/mean', float('nan')):+.3f}  "
              f"{durations[-1]:.0f} s", flush=True)
    final = trainer.run_dir / "final"
    trainer.learner.save_adapter(final)
    trainer.logger.close()
    return trainer, final, curve, time.perf_counter() - started


async def play_hands(tree: object, subject: Policy, opponent: Policy, hands: int, seed: int, in_flight: int) -> dict:
    """`hands` one-hand matches, subject in seat 0 on even hands; chips per hand with a 95% interval."""
    semaphore = asyncio.Semaphore(in_flight)

    async def one(i: int) -> float:
        seat = i % 2
        seats = [opponent, opponent]
        seats[seat] = subject
        async with semaphore:
            record = await play_match(make_game(GAME, 2, hands=1), seats, seed + i // 2, match_id=f"strategy-eval-{opponent.name}-{i}")
        return float(record.outcome["scores"][seat]) if record.outcome else 0.0

    chips = await asyncio.gather(*(one(i) for i in range(hands)))
    mean = statistics.fmean(chips)
    half = 1.96 * statistics.stdev(chips) / math.sqrt(len(chips)) if len(chips) > 1 else float("nan")
    return {"chips_per_hand": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)],
            "hands": len(chips), "win_rate": round(sum(c > 0 for c in chips) / len(chips), 4)}


def plot(curve: list[tuple[int, float]], base: float, uniform: float, out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(*zip(*curve), marker=".", label="live adapter (exact)")
    ax.axhline(base, color="grey", linestyle="--", label=f"base model {base:.3f}")
    ax.axhline(uniform, color="tab:red", linestyle=":", label=f"uniform random {uniform:.3f}")
    ax.axhline(0.0, color="black", linewidth=0.8, label="Nash equilibrium 0")
    ax.set_xlabel("self-play step")
    ax.set_ylabel("exploitability (chips per hand)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


async def run(args: argparse.Namespace) -> dict:
    tree = build_tree(lambda: make_game(GAME, 2, hands=1))
    base = choice_policy(None, args.temperature, "base")
    bot = make_policy("bot")
    base_strategy, bot_strategy = await policy_strategy(tree, base), await policy_strategy(tree, bot)
    base_eval = evaluate(tree, base_strategy)
    uniform = evaluate(tree, uniform_strategy(tree)).exploitability
    print(f"base model: exploitability {base_eval.exploitability:.4f} (uniform {uniform:.4f})", flush=True)
    trainer, final, curve, train_s = await train(args, tree)
    trained = choice_policy(str(final), args.temperature, "trained")
    trained_strategy = await policy_strategy(tree, trained)
    trained_eval = evaluate(tree, trained_strategy)
    eval_started = time.perf_counter()
    vs_base = await play_hands(tree, trained, base, args.eval_hands, args.seed + 10_000, args.in_flight)
    vs_bot = await play_hands(tree, trained, bot, args.eval_hands, args.seed + 20_000, args.in_flight)
    eval_s = time.perf_counter() - eval_started
    plot(curve, base_eval.exploitability, uniform, args.plot,
         f"Kuhn self-play in choice mode, SmolLM2-135M + LoRA ({trainer.step} steps, {train_s / 60:.1f} min)")
    trainer.close()
    ratio = trained_eval.exploitability / base_eval.exploitability if base_eval.exploitability > 0 else float("nan")
    print(f"\ntrained {trainer.step} steps in {train_s / 60:.1f} min; final adapter {final}")
    print(f"exploitability: base {base_eval.exploitability:.4f}  trained {trained_eval.exploitability:.4f}  ratio {ratio:.3f}")
    for label, result, exact in (("base", vs_base, chips_against(tree, trained_strategy, base_strategy)),
                                 ("bot", vs_bot, chips_against(tree, trained_strategy, bot_strategy))):
        print(f"vs {label}: {result['chips_per_hand']:+.3f} chips/hand  95% CI {result['ci95']}  over {result['hands']} hands "
              f"(exact expectation {exact:+.4f}); hands won {result['win_rate']:.3f}")
    print(f"evaluation took {eval_s:.0f} s; curve: {args.plot}")
    return {
        "exploitability_base": round(base_eval.exploitability, 4),
        "exploitability_trained": round(trained_eval.exploitability, 4),
        "exploitability_ratio": round(ratio, 4),
        "chips_per_hand_vs_base": vs_base["chips_per_hand"],
        "chips_per_hand_vs_base_ci95": vs_base["ci95"],
        "chips_per_hand_vs_bot": vs_bot["chips_per_hand"],
        "chips_per_hand_vs_bot_ci95": vs_bot["ci95"],
        "exact_chips_vs_base": round(chips_against(tree, trained_strategy, base_strategy), 4),
        "exact_chips_vs_bot": round(chips_against(tree, trained_strategy, bot_strategy), 4),
        "uniform_exploitability": round(uniform, 4),
        "eval_hands": args.eval_hands,
        "train_steps": trainer.step,
        "train_minutes": round(train_s / 60, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=45.0, help="training time budget (the issue allows at most 45 on 2 cores)")
    parser.add_argument("--eval-hands", type=int, default=400, help="sampled hands against the base and against bot each")
    parser.add_argument("--temperature", type=float, default=1.0, help="choice temperature in training and evaluation")
    parser.add_argument("--groups", type=int, default=4, help="deals per step (GRPO groups)")
    parser.add_argument("--group-size", type=int, default=8, help="hands per deal; both seats are trained")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--in-flight", type=int, default=32, help="evaluation hands at once")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=Path, default=ROOT / "runs")
    parser.add_argument("--name", default="bench-strategy-kuhn")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "img" / "strategy-kuhn.png")
    args = parser.parse_args()
    if args.eval_hands < 2 or args.minutes <= 0:
        parser.error("--eval-hands must be at least 2 and --minutes positive")
    import shutil

    shutil.rmtree(args.runs / args.name, ignore_errors=True)  # each run starts from the base model
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
