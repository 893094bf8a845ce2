"""Self-play GRPO on the shipped SmolLM2 (CPU), then the trained adapter against the base model.

    python -m bench.selfplay                    # 45 minutes of training on Tic-Tac-Toe, 200 eval games
    python -m bench.selfplay --game kuhn_poker --minutes 30
    python -m bench.selfplay --smoke            # one tiny step and 4 eval games: checks the pipeline

Training runs `trainer.run.Trainer` step by step until the time budget is spent, then saves the
final adapter. Evaluation plays `--eval-games` matches of `hf:local+FINAL` against `local` through
`arena.match.play_match` with seats alternating and identical sampling settings for both sides,
all in flight at once on the one batching engine. Win rate counts draws as half; its 95% interval
is Wilson's score interval for that rate over the games played (the normal interval collapses to a
point when every game is won, which a trained adapter does against this base).
Prints a table, saves the training curves as a PNG, and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import time
from pathlib import Path

from arena.match import MatchRecord, play_match
from arena.policy import make_policy
from games.registry import make_game
from trainer.checkpoints import list_checkpoints
from trainer.config import parse_config
from trainer.metrics import read_metrics
from trainer.rewards import outcome_reward
from trainer.run import Trainer, checkpoint_spec

ROOT = Path(__file__).resolve().parent.parent

STEP_GROWTH = 2.0  # how much longer the next step may take than the longest of the last three
OBS = "state"  # training prompts and both sides of the evaluation see the current state only


def build_config(args: argparse.Namespace) -> dict:
    """Sized for 2 CPU cores: a step's cost is the forward+backward over every learner attempt's
    prompt, so prompts are the current state only (not the match history), replies are capped
    short, one epoch per batch, and each attempt also carries its own legality credit, the
    densest signal a tiny model that mostly answers in prose can get."""
    smoke = args.smoke
    return {
        "name": args.name or f"bench-selfplay-{args.game}{'-smoke' if smoke else ''}",
        "output_dir": str(args.runs),
        "base": "local",
        "seed": args.seed,
        "steps": 1 if smoke else 100_000,  # the time budget stops training, not the step count
        "games": [{"id": args.game}],
        "opponents": [{"kind": "self", "weight": 2}, {"kind": "lagged", "weight": 1}, {"kind": "bot", "weight": 1, "policies": ["random"]}],
        "rollout": {
            "groups_per_step": 1 if smoke else 2,
            "group_size": 2 if smoke else 4,
            "in_flight": 2 if smoke else 8,
            "temperature": 1.0,
            "max_new_tokens": args.max_new_tokens,
            "obs": OBS,
        },
        "rewards": {
            "terms": [{"kind": "outcome"}, {"kind": "invalid", "weight": 1.0}, {"kind": "format", "weight": 0.5}],
            "attempt_credit": 1.0,
        },
        "algorithm": {
            "advantage": "spiral" if smoke else "grpo",
            "loss_norm": "dr_grpo",
            "epochs": 1,
            "minibatch_size": 32,
            "micro_batch_size": 8,
            "learning_rate": args.learning_rate,
            "epsilon_high": 0.28,
        },
        "checkpoint": {"every": 5, "register_in_league": False},
        "logging": {"wandb": False},
    }


async def train(config_data: dict, minutes: float) -> tuple[Trainer, Path, float]:
    config = parse_config(config_data, "bench")
    trainer = Trainer(config, resume=True, on_event=_print_event)
    trainer.setup()
    started = time.perf_counter()
    deadline = started + minutes * 60
    durations: list[float] = []
    # A step starts only when twice the longest of the last three steps still fits in the budget,
    # so training never runs past `minutes`: steps grow as play gets legal and games get longer
    # (one measured step took 1.8x the one before it).
    while trainer.step < config.steps and time.perf_counter() + STEP_GROWTH * max(durations[-3:], default=0.0) < deadline:
        step_started = time.perf_counter()
        await trainer.train_step()
        durations.append(time.perf_counter() - step_started)
    last = list_checkpoints(config.run_dir)
    if not last or last[-1][0] != trainer.step:  # always evaluate the adapter as it ended
        await trainer._checkpoint(trainer.step, {})
    trainer.logger.close()
    return trainer, list_checkpoints(config.run_dir)[-1][1], time.perf_counter() - started


def _print_event(kind: str, payload: object) -> None:
    if kind == "step_done":
        m = payload.metrics  # type: ignore[attr-defined]
        shown = {k: round(m[k], 3) for k in ("reward/mean", "invalid_rate", "games/win_vs_opponents", "train/loss", "rollout/seconds", "train/seconds") if isinstance(m.get(k), (int, float))}
        print(f"step {payload.step}: {shown}", flush=True)  # type: ignore[attr-defined]
    elif kind in ("status", "warning", "checkpoint"):
        print(f"{kind}: {payload}", flush=True)


async def evaluate(game_id: str, adapter_dir: Path, games: int, max_new_tokens: int, in_flight: int, seed: int) -> dict:
    sampling = f"temperature=0.7,max_new_tokens={max_new_tokens},obs={OBS}"
    trained = make_policy(f"{checkpoint_spec('local', adapter_dir)},{sampling}")
    trained.name = "trained"
    base = make_policy(f"local,{sampling}")
    base.name = "base"
    semaphore = asyncio.Semaphore(in_flight)

    async def one(i: int) -> tuple[MatchRecord, int]:
        trained_seat = i % 2  # alternate who moves first
        seats = [base, base]
        seats[trained_seat] = trained
        async with semaphore:
            record = await play_match(make_game(game_id), seats, seed + i // 2, match_id=f"eval-{i}")
        return record, trained_seat

    results = await asyncio.gather(*(one(i) for i in range(games)))
    scores, invalid = [], {"trained": [0, 0], "base": [0, 0]}
    for record, seat in results:
        if record.outcome is not None:
            scores.append((outcome_reward(record, seat) + 1) / 2)
        for turn in record.turns:
            side = "trained" if turn.player == seat else "base"
            invalid[side][0] += int(not turn.valid)
            invalid[side][1] += 1
    mean = statistics.fmean(scores) if scores else float("nan")
    low, high = wilson_interval(mean, len(scores)) if scores else (float("nan"), float("nan"))
    return {
        "win_rate_vs_base": round(mean, 4),
        "win_rate_ci95": [round(low, 4), round(high, 4)],
        "invalid_rate_base": round(invalid["base"][0] / max(1, invalid["base"][1]), 4),
        "invalid_rate_trained": round(invalid["trained"][0] / max(1, invalid["trained"][1]), 4),
        "eval_games": len(scores),
        "wins": sum(s == 1 for s in scores),
        "draws": sum(s == 0.5 for s in scores),
        "losses": sum(s == 0 for s in scores),
    }


def wilson_interval(rate: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's score interval for a rate observed over n trials (draws enter the rate as half)."""
    centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def plot(metrics_path: Path, out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_metrics(metrics_path)
    keys = [("reward/mean", "mean reward"), ("invalid_rate", "invalid-move rate"), ("format_failure_rate", "format failures"),
            ("games/win_vs_opponents", "win rate vs lagged/bots"), ("reply_tokens", "reply tokens"), ("train/kl", "KL to base")]
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5))
    for ax, (key, label) in zip(axes.flat, keys):
        points = [(r["step"], r[key]) for r in rows if isinstance(r.get(key), (int, float))]
        if points:
            ax.plot(*zip(*points), marker=".", linewidth=1)
        ax.set_title(label)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", default="tictactoe", choices=["tictactoe", "kuhn_poker"])
    parser.add_argument("--minutes", type=float, default=45.0, help="training time budget (the issue allows at most 45)")
    parser.add_argument("--eval-games", type=int, default=200)
    parser.add_argument("--max-new-tokens", type=int, default=8, help="reply cap in training and evaluation (a move is ~3 tokens)")
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--in-flight", type=int, default=32, help="evaluation games at once")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=Path, default=ROOT / "runs")
    parser.add_argument("--name", default="")
    parser.add_argument("--plot", type=Path, default=None, help="PNG of the curves (default docs/img/selfplay-GAME.png; smoke: in the run folder)")
    parser.add_argument("--smoke", action="store_true", help="one tiny step and 4 evaluation games, to check the pipeline")
    args = parser.parse_args()
    if args.smoke:
        args.minutes, args.eval_games, args.max_new_tokens = min(args.minutes, 0.01), min(args.eval_games, 4), 4

    config_data = build_config(args)
    if args.smoke:  # a smoke run always starts from scratch; a real run resumes a killed one
        import shutil

        shutil.rmtree(Path(config_data["output_dir"]) / config_data["name"], ignore_errors=True)
    trainer, final_dir, train_s = asyncio.run(train(config_data, args.minutes))
    eval_started = time.perf_counter()
    result = asyncio.run(evaluate(args.game, final_dir, args.eval_games, args.max_new_tokens, args.in_flight, args.seed + 10_000))
    eval_s = time.perf_counter() - eval_started
    png = args.plot or (trainer.run_dir / "curves.png" if args.smoke else ROOT / "docs" / "img" / f"selfplay-{args.game}.png")
    plot(trainer.run_dir / "metrics.jsonl", png, f"self-play GRPO, SmolLM2-135M + LoRA, {args.game} ({trainer.step} steps, {train_s / 60:.1f} min)")
    trainer.close()

    print(f"\ngame {args.game}: trained {trainer.step} steps in {train_s / 60:.1f} min; final adapter {final_dir}")
    print(f"evaluation: {result['eval_games']} games vs base in {eval_s:.0f} s  W/D/L {result['wins']}/{result['draws']}/{result['losses']}")
    print(f"  win rate vs base (draws half): {result['win_rate_vs_base']:.3f}  95% CI {result['win_rate_ci95']}")
    print(f"  invalid-move rate: base {result['invalid_rate_base']:.3f}  trained {result['invalid_rate_trained']:.3f}")
    print(f"  curves: {png}")
    headline = {k: result[k] for k in ("win_rate_vs_base", "win_rate_ci95", "invalid_rate_base", "invalid_rate_trained", "eval_games")}
    headline.update({"train_steps": trainer.step, "train_minutes": round(train_s / 60, 2), "game": args.game, "smoke": bool(args.smoke)})
    print(json.dumps(headline))


if __name__ == "__main__":
    main()
