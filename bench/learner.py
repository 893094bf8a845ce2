"""The learner against the bare cost of the same tokens, in one run on one machine.

    python -m bench.learner                         # Kuhn poker (64 hands) and Tic-Tac-Toe (16 games), the strategy bench's settings
    python -m bench.learner --game tictactoe --repeats 5
    python -m bench.learner --game leduc_holdem --micro-batch-memory-gb none   # Leduc, the memory cap lifted

For each game: one step of self-play rollouts in choice mode (bench.strategy's configuration at
GROUPS deals per step: the shipped SmolLM2 + a fresh LoRA, hf engine), then, on those very samples, median of --repeats:
- `learner`: `Learner.update` as `arena train` runs it (behaviour log-probs taken from the
  sampler where it was the learner's engine, a few check rows, the base model's pass for the
  KL term with its memo emptied, as at a run's first step, `epochs` passes of clipped steps, AdamW);
- `recompute`: the same update with `reuse_sampler_logps: false` (every turn run again for its
  behaviour log-probs, as before issue 29);
- `bare`: plain torch on the same micro-batches (cut further within the config's default memory
  cap where the learner's cap is larger or lifted: its attention is width squared): one row per sample holding exactly the tokens
  the learner runs for it (prompt + reply; for a choice turn prompt + every legal move one after
  another), left padded, one forward and one backward of the summed log-probs of those reply
  tokens through the same LoRA, `epochs` times; a plain causal mask, no cache, no prefix sharing,
  no reference, no optimizer.
`dispatches`: the operators each of `learner` and `bare` sends to the device (counted once, untimed,
by a torch dispatch mode; the backward's included). On a GPU at the shipped model's size each is a
kernel launch and the launches set the time (an H100 was busy 0.2 s of a 2.6 s update), so
`dispatch_bare_over_learner` is what `learner_over_bare` tends to there: a GPU figure the CPU can
measure. `--share-prefix on|off` forces the learner's layout (default: the device's, see
trainer.learner.Learner.share_prefix); `--micro-batch-memory-gb` sets the learner's memory cap on a
micro-batch's rows (algorithm.micro_batch_memory_gb; `none` lifts it), which cuts Leduc's
~660-token rows into smaller micro-batches than bench.strategy's size.
Trained tokens are the tokens the learner scores per epoch (prompt and scored reply tokens of every
sample, a choice's every legal move) times epochs; tokens/s = trained tokens / seconds. The
headline `learner_over_bare` is bare seconds / learner seconds (>= 0.7 is the target: the learner
costs at most 1.43x the bare forward and backward of its tokens). It ends with one line of JSON.

`--profile DIR` runs one more learner update under torch.profiler after the timed ones and writes,
per game, DIR/learner-GAME-ops.txt: the update's phases (prepare, the reference pass, each
micro-batch's forward, backward, the optimizer step) and its operators, by host time and, on CUDA,
by device time, so the learner's own overhead on a fast device can be read off one run.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import contextlib
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from bench.strategy import SHORT_NAME, build_config, defaults
from trainer.config import AlgorithmSettings, parse_config
from trainer.learner import Learner, Sample, micro_batches
from trainer.micro_batch_memory import RowMemory
from trainer.run import Trainer


# Deals per measured step: Kuhn 16 x 4 = 64 hands (at bench.strategy's 1,024 the run was killed
# for memory on a 24 GB machine, 2026-11-26, not yet understood; 64 hands peaked near 18 GB),
# Leduc 16 x 4 = 64 hands (a quarter of bench.strategy's step: ~300 turns, ~100 after merging),
# Tic-Tac-Toe bench.strategy's 4 x 4 = 16 games.
GROUPS = {"kuhn_poker": 16, "leduc_holdem": 16, "tictactoe": 4}
DEFAULT_MEMORY_GB = AlgorithmSettings.model_fields["micro_batch_memory_gb"].default  # the config's cap


def samples_of_one_step(trainer: Trainer) -> list[Sample]:
    """One step's rollouts turned into the learner's samples, as train_step does."""
    rollout = asyncio.run(trainer._play_rollout(1))
    episodes = trainer._score_episodes(rollout.records)
    samples, _ = trainer._samples(episodes, trainer._advantages(episodes))
    return samples


def scored_tokens(sample: Sample) -> int:
    """Tokens the learner runs for one sample: the prompt, and the reply or every legal move."""
    if sample.option_ids is not None:
        return len(sample.prompt_ids) + sum(len(ids) for ids in sample.option_ids)
    return len(sample.prompt_ids) + len(sample.completion_ids)


def bare_rows(sample: Sample) -> list[tuple[list[int], int]]:
    """(row ids, scored tokens at its end) for plain torch: one row of exactly the tokens the
    learner runs for the sample: the prompt and its reply, or the prompt and every legal move one
    after another (the learner's one-row layout, here under a plain causal mask: the same cost)."""
    replies = sample.option_ids if sample.option_ids is not None else [sample.completion_ids]
    tail = [token for reply in replies for token in reply]
    return [(sample.prompt_ids + tail, len(tail))]


def bare_logp_sum(model: Any, pad: int, rows: list[tuple[list[int], int]]) -> torch.Tensor:
    """The summed log-probs of each row's last n tokens given the rest, in one left-padded plain
    causal forward on the model's device: no cache, no prefix sharing, no choice softmax."""
    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad, dtype=torch.long)
    attention = torch.zeros_like(ids)
    scored = torch.zeros((len(rows), width), dtype=torch.bool)
    for r, (row, n) in enumerate(rows):
        ids[r, width - len(row):] = torch.tensor(row)
        attention[r, width - len(row):] = 1
        scored[r, width - n:] = True
    # logits of the positions that score a token only (rows end with their reply): the full
    # [rows, width, vocab] tensor would be GBs, which no trainer computes
    keep = max(n for _, n in rows) + 1
    device = next(model.parameters()).device
    ids, attention, scored = ids.to(device), attention.to(device), scored.to(device)
    logits = model(input_ids=ids, attention_mask=attention, logits_to_keep=keep).logits[:, :-1].float()
    logps = logits.log_softmax(-1).gather(2, ids[:, -keep + 1:].unsqueeze(2)).squeeze(2)
    return (logps * scored[:, -keep + 1:]).sum()


def bare_micro_batches(samples: list[Sample], size: int, row_memory: RowMemory, learner_cap_gb: float | None,
                       *, by_prefix: bool) -> list[list[Sample]]:
    """The bare reference's forwards: the learner's cut, within the config's default memory cap
    whatever the learner's. Bare torch runs every row whole under a plain causal mask (width
    squared, no shared prefix), so rows the learner fits under a larger cap do not fit it:
    uncapped, bare Kuhn peaked near 18 GB on 64 hands, and under bench.strategy's 12 GB Leduc cap
    (17 rows of ~660 tokens) bare Leduc passed 18 GB and was killed at 24 (2026-11-29), where the
    learner stays under 9. Where the learner's cap is at or under the default the cut is the
    learner's own; above it, more and smaller forwards of the same rows (little padding changes)."""
    budget = DEFAULT_MEMORY_GB if learner_cap_gb is None else min(learner_cap_gb, DEFAULT_MEMORY_GB)
    return micro_batches(samples, size, lambda width: row_memory.rows_fitting(width, budget), by_prefix=by_prefix)


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work, so a clock read after it counts all of it (CUDA only)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bare_seconds(learner: Learner, chunks: list[list[Sample]], epochs: int) -> float:
    """Forward and backward of the summed reply log-probs over left-padded rows, plain torch."""
    model, pad = learner.model, learner.engine.tokenizer.pad_token_id
    model.train() if learner.dropout else model.eval()
    synchronize(learner.device)
    started = time.perf_counter()
    for _ in range(epochs):
        for chunk in chunks:
            with learner.autocast():  # bfloat16 on CUDA, as the learner computes there
                total = bare_logp_sum(model, pad, [row for sample in chunk for row in bare_rows(sample)])
            total.backward()
    synchronize(learner.device)  # CUDA runs the backward asynchronously: time it to its end
    seconds = time.perf_counter() - started
    learner.optimizer.zero_grad(set_to_none=True)
    model.eval()
    return seconds


class DispatchCount(TorchDispatchMode):
    """Counts the operators dispatched to a device inside the block, backward included."""

    def __init__(self) -> None:
        super().__init__()
        self.ops = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.ops += 1
        return func(*args, **(kwargs or {}))


def dispatches(run: Callable[[], Any]) -> int:
    """Operators `run()` dispatches."""
    with DispatchCount() as count:
        run()
    return count.ops


def timed_update(learner: Learner, samples: list[Sample], reuse: bool) -> float:
    """Seconds of one `Learner.update` on fresh copies of `samples`, the adapter restored after."""
    state = {k: v.detach().clone() for k, v in learner.params.items()}
    optimizer = copy.deepcopy(learner.optimizer.state_dict())
    learner.settings = learner.settings.model_copy(update={"reuse_sampler_logps": reuse})
    # every update pays for the base model's pass as a run's first step does: a remembered base
    # log-prob (Learner.base_logps) would make the repeats after the first cheaper than a step
    # that meets new decisions, and flatter the learner
    learner.base_logps = type(learner.base_logps)(learner.base_logps.entries)
    synchronize(learner.device)
    started = time.perf_counter()
    learner.update(copy.deepcopy(samples), random.Random(0))
    synchronize(learner.device)
    seconds = time.perf_counter() - started
    with torch.no_grad():
        for k, p in learner.params.items():
            p.copy_(state[k])
    learner.optimizer.load_state_dict(optimizer)
    return seconds


@contextlib.contextmanager
def phases_labelled(learner: Learner) -> Iterator[None]:
    """The learner's phases as named ranges in a profile: its methods wrapped on this instance only,
    for the length of the block (the learner itself carries no profiling code)."""
    names = ["prepare", "_reference_logps", "_step", "_action_logps", "_choice_logps", "_forward_logps", "_run"]

    def labelled(name: str, method: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            with torch.profiler.record_function(f"learner.{name.lstrip('_')}"):
                return method(*args, **kwargs)
        return run

    for name in names:
        setattr(learner, name, labelled(name, getattr(learner, name)))
    step, backward = learner.optimizer.step, torch.Tensor.backward
    learner.optimizer.step = labelled("optimizer_step", step)  # type: ignore[method-assign]
    torch.Tensor.backward = labelled("backward", backward)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for name in names:
            delattr(learner, name)  # the class's methods again
        learner.optimizer.step = step  # type: ignore[method-assign]
        torch.Tensor.backward = backward  # type: ignore[method-assign]


def profile_update(learner: Learner, samples: list[Sample], path: Path) -> None:
    """One more `Learner.update` (reused log-probs, base pass as at a first step) under
    torch.profiler: the phases and the operators, by host and device time, into `path`."""
    from torch.profiler import ProfilerActivity, profile

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if learner.device.type == "cuda" else [])
    with profile(activities=activities) as prof, phases_labelled(learner):
        seconds = timed_update(learner, samples, reuse=True)
    averages = prof.key_averages()
    sections = [f"one learner update under the profiler: {seconds:.2f} s on {learner.device}"]
    sorts = ["cpu_time_total", "self_cpu_time_total"] + (["device_time_total", "self_device_time_total"] if learner.device.type == "cuda" else [])
    # every phase, whatever its rank: the tables below keep only their top rows, and a short
    # phase (the optimizer step) falls out of them when the machine is busy
    phases = sorted((e for e in averages if e.key.startswith("learner.")), key=lambda e: -e.cpu_time_total)
    sections.append("\n== the learner's phases ==\n" + "\n".join(f"{e.key}: {e.count} calls, {e.cpu_time_total / 1e3:.1f} ms host total" for e in phases))
    for sort in sorts:
        sections.append(f"\n== by {sort} ==\n" + averages.table(sort_by=sort, row_limit=40, max_name_column_width=60))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(sections), encoding="utf-8")
    print(f"profile: {path}", flush=True)


def measure(game: str, args: argparse.Namespace, runs: Path) -> dict[str, Any]:
    options = defaults(game, name=f"bench-learner-{game}", runs=runs, seed=args.seed, group_size=args.group_size,
                       groups=args.groups or GROUPS[game])
    trainer = Trainer(parse_config(build_config(options), "bench"))
    trainer.setup()
    if args.share_prefix != "auto":
        trainer.learner.settings = trainer.learner.settings.model_copy(update={"share_prefix": args.share_prefix == "on"})
    if args.micro_batch_memory_gb is not CONFIG_CAP:
        trainer.learner.settings = trainer.learner.settings.model_copy(update={"micro_batch_memory_gb": args.micro_batch_memory_gb})
    started = time.perf_counter()
    samples = samples_of_one_step(trainer)
    rollout_s = time.perf_counter() - started
    learner = trainer.learner
    settings = learner.settings
    merged = learner.rows_of(samples)
    chunks = micro_batches(merged, settings.micro_batch_size, learner.rows_fitting, by_prefix=learner.share_prefix)  # the learner's own cut
    bare_chunks = bare_micro_batches(merged, settings.micro_batch_size, learner.row_memory, settings.micro_batch_memory_gb,
                                     by_prefix=learner.share_prefix)
    tokens = sum(scored_tokens(s) for s in merged) * settings.epochs
    times: dict[str, list[float]] = {"learner": [], "recompute": [], "bare": []}
    for _ in range(args.repeats):  # interleaved, so a busier moment hurts all three alike
        times["learner"].append(timed_update(learner, samples, reuse=True))
        times["recompute"].append(timed_update(learner, samples, reuse=False))
        times["bare"].append(bare_seconds(learner, bare_chunks, settings.epochs))
    medians = {k: statistics.median(v) for k, v in times.items() if v}  # none at --repeats 0 (dispatches only)
    ops = {"learner": dispatches(lambda: timed_update(learner, samples, reuse=True)),
           "bare": dispatches(lambda: bare_seconds(learner, bare_chunks, settings.epochs))}
    if args.profile is not None:
        profile_update(learner, samples, args.profile / f"learner-{game}-ops.txt")
    trainer.close()
    out = {
        "game": game, "turns": len(samples), "samples": len(merged), "micro_batches": len(chunks), "epochs": settings.epochs,
        "trained_tokens": tokens, "rollout_s": round(rollout_s, 1),
        **{f"{k}_s": round(v, 2) for k, v in medians.items()},
        **{f"{k}_tokens_per_s": round(tokens / v, 1) for k, v in medians.items()},
        "learner_over_bare": round(medians["bare"] / medians["learner"], 3) if medians else None,
        "recompute_over_bare": round(medians["bare"] / medians["recompute"], 3) if medians else None,
        "share_prefix": learner.share_prefix, "micro_batch_memory_gb": settings.micro_batch_memory_gb,
        "learner_dispatches": ops["learner"], "bare_dispatches": ops["bare"],
        "dispatch_bare_over_learner": round(ops["bare"] / ops["learner"], 3),
    }
    print(json.dumps(out), flush=True)
    return out


CONFIG_CAP = object()  # --micro-batch-memory-gb left out: the config's cap (not a string, so argparse leaves it as is)


def memory_cap(text: str) -> float | None:
    """--micro-batch-memory-gb: a positive number of GB, or 'none'."""
    if text == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of GB or 'none', got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"the cap must be above 0 GB, got {text!r}")
    return value


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=["kuhn_poker", "leduc_holdem", "tictactoe", "both"], default="both",
                        help="both: Kuhn poker and Tic-Tac-Toe, the issue's two")
    parser.add_argument("--groups", type=int, default=None, help="deals per step (default: Kuhn 16, Leduc 16, Tic-Tac-Toe 4)")
    parser.add_argument("--group-size", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3, help="timed updates of each kind (median); 0: the dispatch counts only")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--share-prefix", choices=["auto", "on", "off"], default="auto",
                        help="the learner's layout: a shared prompt prefix run once (on) or every row whole (off); auto: the device's")
    parser.add_argument("--profile", type=Path, default=None, metavar="DIR",
                        help="also profile one learner update per game (torch.profiler) into DIR/learner-GAME-ops.txt")
    parser.add_argument("--micro-batch-memory-gb", type=memory_cap, default=CONFIG_CAP, metavar="GB",
                        help="the learner's memory cap on a micro-batch (algorithm.micro_batch_memory_gb); 'none' lifts it (default: the config's)")
    return parser.parse_args(argv)


def main() -> None:
    args = arguments()
    games = ["kuhn_poker", "tictactoe"] if args.game == "both" else [args.game]
    with tempfile.TemporaryDirectory(prefix="bench-learner-") as tmp:
        results = {game: measure(game, args, Path(tmp)) for game in games}
    summary: dict[str, Any] = {"torch_threads": torch.get_num_threads(), "share_prefix": args.share_prefix}
    for game, r in results.items():
        short = SHORT_NAME[game]
        summary[f"{short}_learner_over_bare"] = r["learner_over_bare"]
        summary[f"{short}_update_s"] = r.get("learner_s")
        summary[f"{short}_update_s_recompute"] = r.get("recompute_s")
        summary[f"{short}_rollout_s"] = r["rollout_s"]
        summary[f"{short}_dispatch_bare_over_learner"] = r["dispatch_bare_over_learner"]
    ratios = [r["learner_over_bare"] for r in results.values() if r["learner_over_bare"] is not None]
    summary["learner_over_bare"] = min(ratios) if ratios else None
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
