"""What the learner's memory cap on a micro-batch costs in time: one step's samples, one update per cap.

    python -m bench.experiments.micro_batch_cap --game leduc_holdem --cap 6 --cap 12 --cap none

algorithm.micro_batch_memory_gb (trainer/micro_batch_memory.py) cuts a micro-batch's rows by their
estimated memory: Leduc's ~660-token choice rows go 9 to a micro-batch at 6 GB instead of
bench.strategy's 32, and each micro-batch runs a seat's shared rules again. This plays one step of
bench.strategy's self-play (bench.learner's configuration and --groups), then times
`Learner.update` on those very samples under each --cap in turn (the adapter and optimizer restored
between them, the base model's pass paid every time, as bench.learner times it), --repeats rounds
interleaved so a busier moment hurts every cap alike, and reports each cap's micro-batches, median
seconds and the process's peak resident memory after it (a cap that does not fit is killed by the
machine, so put the larger caps last). Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path

from bench.learner import GROUPS, memory_cap, samples_of_one_step, timed_update
from bench.strategy import build_config, defaults
from trainer.config import parse_config
from trainer.learner import micro_batches
from trainer.run import Trainer


def peak_rss_gb() -> float:
    """The process's peak resident memory so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GROUPS), default="leduc_holdem")
    parser.add_argument("--groups", type=int, default=None, help="deals per step (default: bench.learner's)")
    parser.add_argument("--cap", type=memory_cap, action="append", required=True, metavar="GB",
                        help="a micro-batch memory cap to time, in GB or 'none' (repeatable)")
    parser.add_argument("--repeats", type=int, default=1, help="timed updates per cap (median)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="micro-batch-cap-") as tmp:
        options = defaults(args.game, name=f"micro-batch-cap-{args.game}", runs=Path(tmp), seed=args.seed,
                           groups=args.groups or GROUPS[args.game])
        trainer = Trainer(parse_config(build_config(options), "bench"))
        trainer.setup()
        started = time.perf_counter()
        samples = samples_of_one_step(trainer)
        rollout_s = time.perf_counter() - started
        learner = trainer.learner
        merged = learner.rows_of(samples)
        seconds: dict[str, list[float]] = {str(cap): [] for cap in args.cap}
        rows: dict[str, dict[str, float | int | None]] = {}
        for _ in range(args.repeats):
            for cap in args.cap:
                learner.settings = learner.settings.model_copy(update={"micro_batch_memory_gb": cap})
                seconds[str(cap)].append(timed_update(learner, samples, reuse=True))
                chunks = micro_batches(merged, learner.settings.micro_batch_size, learner.rows_fitting, by_prefix=learner.share_prefix)
                rows[str(cap)] = {"cap_gb": cap, "micro_batches": len(chunks), "peak_rss_gb": round(peak_rss_gb(), 1)}
                print(f"cap {cap}: {len(chunks)} micro-batches, {seconds[str(cap)][-1]:.1f} s, peak RSS {peak_rss_gb():.1f} GB", flush=True)
        trainer.close()
    results = [rows[key] | {"update_s": round(statistics.median(times), 2)} for key, times in seconds.items()]
    first = results[0]["update_s"]
    print(json.dumps({"game": args.game, "turns": len(samples), "samples": len(merged), "rollout_s": round(rollout_s, 1),
                      "micro_batch_size": learner.settings.micro_batch_size, "caps": results,
                      "update_s_over_first_cap": [round(r["update_s"] / first, 3) for r in results]}))


if __name__ == "__main__":
    main()
