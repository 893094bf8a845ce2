"""Every CUDA path of the project that needs only torch, transformers and peft, run once: the check
to run first on a machine with a GPU (scripts/gpu-check.sh; docs/architecture.md says which GPU
paths it verifies and which it does not).

    1. the device: CUDA present, bfloat16 supported, the dtype rule gives bfloat16 there
    2. hf engine, batched generate: 8 chats at once, seeded, with the sampled tokens' log-probs
    3. hf engine, batched choice scoring: 8 moves scored at once, probabilities that sum to 1
    4. one learner step in bfloat16 (autocast, LoRA kept in float32) with a checkpoint saved
    5. one choice-mode learner step (Kuhn poker) in the device's layout, its scores against the engine's
    6. a small league on the GPU with that LoRA checkpoint against `random`, stored and rated

The same code runs on the CPU with `--device cpu` (the test suite does, so this script cannot rot
on machines without a GPU). It prints one line per check and ends with one line of JSON.

    python scripts/gpu_check.py [--device cuda|cpu] [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable

CHATS = 8
PROMPT = [
    {"role": "system", "content": "You play Tic-Tac-Toe as X. Cells are numbered 1 to 9."},
    {"role": "user", "content": "Board:\n1|2|3\n4|5|6\n7|8|9\nPick a free cell. Answer like [5]."},
]


def check_device(device: str) -> str:
    import torch

    from arena.llm.model import compute_dtype

    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise RuntimeError("torch sees no CUDA device (torch.cuda.is_available() is False)")
        if not torch.cuda.is_bf16_supported():
            raise RuntimeError(f"{torch.cuda.get_device_name()} does not support bfloat16")
        expected = "bfloat16"
    else:
        expected = "float32"
    dtype = compute_dtype(device)
    if dtype != expected:
        raise RuntimeError(f"compute_dtype({device!r}) is {dtype}, expected {expected}")
    name = torch.cuda.get_device_name() if device.startswith("cuda") else "cpu"
    return f"{name}, torch {torch.__version__}, weights in {dtype}"


def _engine(device: str) -> Any:
    from arena.llm.engines import EngineOptions, open_engine

    engine = open_engine("local", "hf", options=EngineOptions(device=device))
    if not str(engine.device).startswith(device):
        raise RuntimeError(f"the hf engine loaded on {engine.device}, not {device}")
    return engine


def check_generate(device: str) -> str:
    from arena.llm.engines import SamplingParams

    engine = _engine(device)

    async def batch() -> list[Any]:
        params = [SamplingParams(temperature=0.7, max_new_tokens=12, seed=seed, logprobs=True) for seed in range(CHATS)]
        return await asyncio.gather(*(engine.chat(PROMPT, p) for p in params))

    before = engine.stats.largest_batch
    replies = asyncio.run(batch())
    for reply in replies:
        if not reply.completion_ids or len(reply.completion_logprobs or []) != len(reply.completion_ids):
            raise RuntimeError("a reply came without one log-prob per sampled token")
        if not all(math.isfinite(x) and x <= 0 for x in reply.completion_logprobs):
            raise RuntimeError("a sampled token's log-prob is not a finite number <= 0")
    largest = max(before, engine.stats.largest_batch)
    return f"{CHATS} chats, largest batch {largest}, dtype {engine.dtype}"


def check_choose(device: str) -> str:
    from arena.llm.engines.scoring import choice_probabilities

    engine = _engine(device)
    moves = [str(cell) for cell in range(1, 10)]

    async def batch() -> list[Any]:
        return await asyncio.gather(*(engine.choose(PROMPT, moves, temperature=1.0, seed=seed) for seed in range(CHATS)))

    results = asyncio.run(batch())
    for choice, generation in results:
        total = sum(choice_probabilities(generation.option_logprobs or [], 1.0))
        if choice not in moves or abs(total - 1.0) > 1e-9:
            raise RuntimeError(f"choose gave {choice!r} with probabilities summing to {total}")
    return f"{CHATS} choices over {len(moves)} moves"


def _one_training_step(device: str, out: Path, name: str, games: list[dict], rollout: dict, algorithm: dict) -> tuple[Any, Any]:
    """One `arena train` step with a checkpoint saved; its report and trainer (closed). Fails on a
    non-finite loss."""
    from trainer.config import parse_config
    from trainer.run import Trainer

    config = parse_config({
        "name": name, "output_dir": str(out / "runs"), "steps": 1, "seed": 0, "device": device, "games": games,
        "rollout": {"engine": "hf", **rollout}, "algorithm": {"epochs": 1, **algorithm},
        "checkpoint": {"every": 1, "register_in_league": False},
        "eval": {"games_per_opponent": 0},
        "logging": {"wandb": False},
    })
    trainer = Trainer(config)
    try:
        [report] = asyncio.run(trainer.train())
    finally:
        trainer.close()
    metrics = report.metrics
    if not metrics.get("train/skipped") and not math.isfinite(float(metrics.get("train/loss", float("nan")))):
        raise RuntimeError(f"the loss is not finite: {metrics.get('train/loss')}")
    return report, trainer


def check_learner_step(device: str, out: Path) -> str:
    report, trainer = _one_training_step(
        device, out, "gpu-check", [{"id": "tictactoe"}],
        rollout={"groups_per_step": 2, "group_size": 2, "in_flight": 4, "max_new_tokens": 8},
        algorithm={"advantage": "spiral", "minibatch_size": 16, "micro_batch_size": 8},
    )
    metrics = report.metrics
    if report.checkpoint is None:
        raise RuntimeError("no checkpoint was saved")
    if device.startswith("cuda") and not trainer.learner.use_bf16:
        raise RuntimeError("the learner did not compute in bfloat16 on CUDA")
    how = "skipped (every advantage 0)" if metrics.get("train/skipped") else f"loss {float(metrics['train/loss']):.4f}"
    return f"{metrics['samples']} samples, {how}, checkpoint {report.checkpoint.name}"


def check_choice_learner_step(device: str, out: Path) -> str:
    """One Kuhn poker step in choice mode: the learner scores every legal move with gradients in
    the device's layout (on CUDA each prompt and its moves in one forward, `share_prefix: auto`),
    and its recompute of the check rows is compared with the engine's own draw
    probabilities (`mismatch/logp_abs_max`, in nats: float32 rounding on the CPU, bfloat16's on CUDA)."""
    report, trainer = _one_training_step(
        device, out, "gpu-check-choice", [{"id": "kuhn_poker", "options": {"hands": 1}}],
        rollout={"mode": "choice", "obs": "state", "temperature": 5.0, "groups_per_step": 4, "group_size": 4, "in_flight": 16},
        algorithm={"minibatch_size": 64, "micro_batch_size": 64, "kl_coef": 0.1, "merge_duplicates": True},
    )
    metrics = report.metrics
    learner = trainer.learner
    if learner.share_prefix is device.startswith("cuda"):
        raise RuntimeError(f"share_prefix auto chose {learner.share_prefix} on {device}")
    mismatch = float(metrics.get("mismatch/logp_abs_max", float("nan")))
    if not math.isfinite(mismatch):
        raise RuntimeError(f"no finite sampler/learner mismatch: {metrics.get('mismatch/logp_abs_max')}")
    layout = "shared prefix" if learner.share_prefix else "one forward per micro-batch"
    return f"{metrics['train/samples']} samples ({layout}), engine vs learner max {mismatch:.2e} nats"


def check_league(device: str, out: Path) -> str:
    from league.config import parse_config
    from league.runner import run_league
    from league.store import Store

    checkpoints = sorted((out / "runs" / "gpu-check").glob("step-*"))
    if not checkpoints:
        raise RuntimeError("no LoRA checkpoint to play (the learner step failed)")
    config = parse_config({
        "name": "gpu-check", "seed": 0, "scheduler": "round_robin", "matches_per_pair": 4, "concurrency": 4,
        "games": [{"id": "tictactoe"}],
        "policies": [
            {"name": "checkpoint", "spec": f"hf:local+{checkpoints[-1].resolve()},engine=hf,max_new_tokens=8"},
            {"name": "random", "spec": "random"},
        ],
    }, source="gpu-check league")
    with Store(f"sqlite:///{out / 'league.db'}") as store:
        summary = asyncio.run(run_league(config, store))
    if summary.finished != 4:
        raise RuntimeError(f"{summary.finished} of 4 matches finished")
    return f"{summary.finished} matches of the checkpoint against random, stored and rated"


def run_checks(device: str, out: Path) -> list[dict[str, Any]]:
    os.environ["ARENA_DEVICE"] = device  # policies built by the league load there too
    checks: list[tuple[str, Callable[[], str]]] = [
        ("device", lambda: check_device(device)),
        ("hf_generate_batch", lambda: check_generate(device)),
        ("hf_choose_batch", lambda: check_choose(device)),
        ("learner_step_bf16" if device.startswith("cuda") else "learner_step", lambda: check_learner_step(device, out)),
        ("learner_step_choice", lambda: check_choice_learner_step(device, out)),
        ("league_with_lora_checkpoint", lambda: check_league(device, out)),
    ]
    results = []
    for name, check in checks:
        started = time.perf_counter()
        try:
            detail, ok = check(), True
        except Exception as exc:  # noqa: BLE001 - every check reports, the next one still runs
            detail, ok = f"{type(exc).__name__}: {exc}", False
            traceback.print_exc(file=sys.stderr)
        seconds = round(time.perf_counter() - started, 1)
        results.append({"check": name, "ok": ok, "seconds": seconds, "detail": detail})
        print(f"{'PASS' if ok else 'FAIL'}  {name:<28} {seconds:7.1f} s  {detail}", flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu: the same checks on the CPU")
    parser.add_argument("--out", type=Path, default=None, help="where the run and its league go (default: a temporary folder)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="arena-gpu-check-"))
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    results = run_checks(args.device, out)
    failed = [r["check"] for r in results if not r["ok"]]
    print(json.dumps({"gpu_check_device": args.device, "gpu_check_passed": len(results) - len(failed),
                      "gpu_check_failed": failed, "gpu_check_seconds": round(time.perf_counter() - started, 1),
                      "checks": {r["check"]: r["seconds"] for r in results}}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
