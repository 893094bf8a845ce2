"""Does self-play climb the frozen suite? Train on core-v1's games, then rate the base and the result on core-v1.

    python -m bench.core_climb                       # examples/train-core-cpu.yaml, at most 120 minutes, then two core-v1 cards
    python -m bench.core_climb --minutes 10 --steps 3 # a short run (say so when you quote it)
    python -m bench.core_climb --evaluate-only       # rate the base and the run's last checkpoint again (cards resume)

1. `arena train` on --config (default examples/train-core-cpu.yaml: every core-v1 game in free text
   under the strict parser, self-play with earlier checkpoints and `random` as opponents), until its
   `steps` or --minutes, whichever comes first; the last adapter is saved as runs/NAME/final.
2. `arena eval suite --suite core-v1` (the full suite, 124 matches) on the base model and on the
   final checkpoint, each with the spec the run trains and plays with (trainer.run.checkpoint_spec
   plus the rollout's sampling: obs, prompt, mode, temperature, max_new_tokens), both pinned to the hf engine so
   the two cards are made on the same engine, which the output names. The cards land in --db
   (resumable: a killed evaluation continues when run again) and as JSON beside the run.

Headline: `core_v1_rating_before`, `core_v1_rating_after` (anchored ratings on core-v1's frozen
scale, where `random` is 1017.8 and the shipped model's own greedy 32-token reference 664.7),
their 95% intervals, and `ci_separated` (the two intervals do not overlap and after is above).
Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

import yaml

from trainer.config import parse_config
from trainer.rollouts import checkpoint_play_params
from trainer.run import Trainer, trained_play_params

ROOT = Path(__file__).resolve().parent.parent
ENGINE = "hf"  # both cards on one engine: the suite's references play on hf, every install has it
FINAL = "final"
STEP_GROWTH = 1.5  # a step starts only if 1.5x the longest of the last three still fits the budget


async def train(config_path: Path, name: str, runs: Path, minutes: float, steps: int | None) -> tuple[Trainer, int, float]:
    """The run from scratch until its steps or the time budget; the last step's adapter is saved
    as runs/NAME/final (a peft folder, with the step it was taken at in step.txt)."""
    data = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    data.update(name=name, output_dir=str(runs))
    if steps is not None:
        data["steps"] = steps
    config = parse_config(data, str(config_path))
    shutil.rmtree(config.run_dir, ignore_errors=True)  # each run starts from the base model
    trainer = Trainer(config, use_wandb=False)
    trainer.setup()
    started = time.perf_counter()
    deadline = started + minutes * 60
    durations: list[float] = []
    try:
        while trainer.step < config.steps and time.perf_counter() + STEP_GROWTH * max(durations[-3:], default=0.0) < deadline:
            step_started = time.perf_counter()
            report = await trainer.train_step()
            durations.append(time.perf_counter() - step_started)
            m = report.metrics
            print(f"step {report.step}: invalid {m.get('invalid_rate', float('nan')):.3f}  reward {m.get('reward/mean', float('nan')):+.3f}  "
                  f"{m.get('games', 0)} games  {durations[-1]:.0f} s", flush=True)
        trainer.learner.save_adapter(trainer.run_dir / FINAL)
        (trainer.run_dir / FINAL / "step.txt").write_text(str(trainer.step), encoding="utf-8")
    finally:
        trainer.logger.close()
    return trainer, trainer.step, time.perf_counter() - started


def play_spec(config_path: Path, adapter: Path | None) -> str:
    """The spec a checkpoint of this run plays with (and the base, with the same sampling)."""
    config = parse_config(yaml.safe_load(config_path.read_text(encoding="utf-8")), str(config_path))
    rollout = config.rollout
    base = f"hf:{config.base}+{adapter.resolve()}" if adapter is not None else config.base
    trained = trained_play_params(rollout.obs, rollout.mode, rollout.temperature, rollout.prompt)
    return f"{base},engine={ENGINE}{trained}{checkpoint_play_params(rollout)}"


def rate(spec: str, name: str, db: str, concurrency: int) -> dict[str, Any]:
    """The core-v1 card of `spec` (resumes a stored, interrupted one)."""
    from evaluation.suite_evaluation import run_evaluation
    from evaluation.suites import load_suite
    from league.store import Store

    started = time.perf_counter()
    with Store(db) as store:
        card, _summary = run_evaluation(store, load_suite("core-v1"), spec, name, concurrency=concurrency)
    card["wall_s"] = round(time.perf_counter() - started, 1)
    rating = card.get("rating") or {}
    print(f"{name}: core-v1 rating {rating.get('rating')} [{rating.get('lo')}, {rating.get('hi')}]  engine {card.get('engine')}  "
          f"{card['matches']['finished']}/{card['matches']['planned']} matches  {card['wall_s']:.0f} s", flush=True)
    return card


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "examples" / "train-core-cpu.yaml")
    parser.add_argument("--minutes", type=float, default=120.0, help="training time budget (the issue allows at most 120 on 2 cores)")
    parser.add_argument("--steps", type=int, default=None, help="override the config's steps")
    parser.add_argument("--runs", type=Path, default=ROOT / "runs")
    parser.add_argument("--name", default="bench-core-climb")
    parser.add_argument("--db", default=None, help="store for the two cards (default: sqlite under the run folder)")
    parser.add_argument("--concurrency", type=int, default=16, help="suite matches in flight")
    parser.add_argument("--evaluate-only", action="store_true", help="skip training: rate the base and the run's final adapter")
    parser.add_argument("--before-name", default="base", help="the base's card in --db (an earlier, complete card of the same spec is reused)")
    args = parser.parse_args()
    run_dir = args.runs / args.name
    train_steps, train_s = None, None
    if not args.evaluate_only:
        trainer, train_steps, train_s = asyncio.run(train(args.config, args.name, args.runs, args.minutes, args.steps))
        trainer.close()
        print(f"trained {train_steps} steps in {train_s / 60:.1f} min", flush=True)
    final = run_dir / FINAL
    if not (final / "step.txt").is_file():
        parser.error(f"{final} holds no trained adapter: train first (without --evaluate-only)")
    step = int((final / "step.txt").read_text(encoding="utf-8"))
    db = args.db or f"sqlite:///{(run_dir / 'core-v1-cards.db').resolve()}"
    before = rate(play_spec(args.config, None), args.before_name, db, args.concurrency)
    after = rate(play_spec(args.config, final), f"{args.name}/step-{step}", db, args.concurrency)
    for label, card in (("before", before), ("after", after)):
        (run_dir / f"core-v1-{label}.json").write_text(json.dumps(card, indent=2), encoding="utf-8")
    low, high = before.get("rating") or {}, after.get("rating") or {}
    separated = bool(low and high and high["lo"] > low["hi"])
    figures = {
        "core_v1_rating_before": low.get("rating"),
        "core_v1_rating_before_ci95": [low.get("lo"), low.get("hi")],
        "core_v1_rating_after": high.get("rating"),
        "core_v1_rating_after_ci95": [high.get("lo"), high.get("hi")],
        "ci_separated": separated,
        "above_random": bool(high and high["rating"] > 1017.82),
        "engine": after.get("engine"),
        "spec_before": before.get("spec"),
        "spec_after": after.get("spec"),
        "checkpoint_step": step,
        "train_steps": train_steps,
        "train_minutes": None if train_s is None else round(train_s / 60, 2),
        "eval_wall_s": [before["wall_s"], after["wall_s"]],
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
