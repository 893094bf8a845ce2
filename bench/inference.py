"""Moves per second of the `local` policy: sequential play vs 1, 8 and 32 concurrent Tic-Tac-Toe
matches vs one raw batched `generate` of the same size, side by side in one run.

- Every match is `local` (seat 0) against `random` (seat 1), played by arena.match.play_match, so
  the measured rate is the local policy's replies (each act call, retries after invalid moves
  included) per second.
- Concurrent N: N lanes each play matches back to back, so N matches are always in flight (as in
  a league); the rate is replies completed / time of the last completion inside the window, which
  counts whole batches only.
- Sequential: one match at a time, one reply at a time.
- Raw generate: the same prompts the policy sent (recorded during the runs), left padded, one plain
  `model.generate(do_sample=True)` with the policy's temperature / top_p / max_new_tokens, no queue,
  no policy, no game: the ceiling the engine is measured against. Median of --repeats.

    .venv/bin/python bench/inference.py [--window 90] [--window32 240] [--max-new-tokens 24] [--repeats 3] [--obs state]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arena.llm.engine import Generation, SamplingParams, get_engine  # noqa: E402
from arena.match import play_match  # noqa: E402
from arena.policy import MoveRequest, Policy, PolicyReply, make_policy  # noqa: E402
from games.registry import make_game  # noqa: E402

GAME = "tictactoe"


def engine_of(policy: Policy) -> Any:
    return getattr(policy, "engine", None) or get_engine("local")


class Counting(Policy):
    """Delegates to a policy and stamps the completion time of every reply."""

    def __init__(self, inner: Policy, stamps: list[float]):
        self.inner, self.stamps = inner, stamps
        self.name, self.spec = inner.name, inner.spec

    async def act(self, request: MoveRequest) -> PolicyReply:
        reply = await self.inner.act(request)
        self.stamps.append(time.perf_counter())
        return reply


def record_prompts(engine: Any, sink: list[tuple[list[dict], SamplingParams]]) -> None:
    """Keep every (messages, params) the policy sends, for the raw-generate comparison."""
    original = engine.chat

    async def chat(messages: list[dict], params: SamplingParams, adapter: str | None = None) -> Generation:
        sink.append((messages, params))
        return await original(messages, params, adapter)

    engine.chat = chat


async def run_lanes(policy: Policy, lanes: int, window_s: float, seed0: int) -> dict[str, float]:
    """`lanes` matches always in flight for `window_s`; replies/s over whole batches."""
    stamps: list[float] = []
    counting = Counting(policy, stamps)
    opponent = make_policy("random")
    start = time.perf_counter()
    deadline = start + window_s
    matches = 0

    async def lane(index: int) -> None:
        nonlocal matches
        seed = seed0 + index * 10_000
        while True:
            await play_match(make_game(GAME), [counting, opponent], seed=seed)
            matches += 1
            seed += 1

    tasks = [asyncio.create_task(lane(i)) for i in range(lanes)]
    await asyncio.wait(tasks, timeout=window_s)
    for task in tasks:  # matches still running at the deadline are abandoned, not waited for
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    # The model thread may still be finishing an abandoned batch: let it, so the next setting starts clean.
    await asyncio.get_running_loop().run_in_executor(engine_of(policy)._executor, lambda: None)
    inside = [t for t in stamps if t <= deadline]
    if not inside:
        raise SystemExit(f"no reply finished within {window_s:g}s with {lanes} lanes: raise --window")
    elapsed = max(inside) - start
    return {"replies": len(inside), "seconds": round(elapsed, 2), "replies_per_s": len(inside) / elapsed, "matches": matches}


def raw_generate_rate(engine: Any, prompts: list[tuple[list[dict], SamplingParams]], batch: int, repeats: int) -> float:
    """Replies/s of one plain batched generate over `batch` recorded prompts (median of repeats)."""
    import torch

    tok, model = engine.tokenizer, engine.model
    rng = random.Random(0)
    rates = []
    for _ in range(repeats):
        chosen = [prompts[rng.randrange(len(prompts))] for _ in range(batch)]
        texts = [tok.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m, _ in chosen]
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(engine.device)
        params = chosen[0][1]
        sampling: dict[str, Any] = {"do_sample": True, "temperature": params.temperature, "top_p": params.top_p} if params.temperature > 0 else {"do_sample": False}
        t0 = time.perf_counter()
        with torch.inference_mode():
            model.generate(**enc, max_new_tokens=params.max_new_tokens, pad_token_id=tok.pad_token_id, **sampling)
        rates.append(batch / (time.perf_counter() - t0))
    return statistics.median(rates)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=float, default=90.0, help="seconds each concurrent setting runs")
    parser.add_argument("--window32", type=float, default=240.0, help="seconds for 32 concurrent matches (a batch of 32 long prompts takes a while on 2 cores)")
    parser.add_argument("--sequential-window", type=float, default=45.0, help="seconds of one-at-a-time play")
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--repeats", type=int, default=3, help="raw generate repeats (median)")
    parser.add_argument("--obs", choices=["history", "state"], default="history",
                        help="the policy's observation mode: the whole match so far (default) or the current state only (shorter prompts)")
    args = parser.parse_args()

    engine = get_engine("local")
    prompts: list[tuple[list[dict], SamplingParams]] = []
    record_prompts(engine, prompts)
    spec = f"local,max_new_tokens={args.max_new_tokens},temperature={args.temperature}" + ("" if args.obs == "history" else f",obs={args.obs}")
    policy = make_policy(spec)
    policy_kind = spec
    print(f"policy: {policy_kind}; torch threads: {__import__('torch').get_num_threads()}; {platform.processor() or platform.machine()}, {os.cpu_count()} cpus", flush=True)

    results: dict[str, Any] = {}
    results["sequential"] = await run_lanes(policy, 1, args.sequential_window, seed0=1)
    print("sequential", results["sequential"], flush=True)
    for lanes in (1, 8, 32):
        results[f"concurrent{lanes}"] = await run_lanes(policy, lanes, {1: args.sequential_window, 8: args.window, 32: args.window32}[lanes], seed0=lanes * 1_000_000)
        batches = engine.stats.largest_batch
        print(f"concurrent{lanes}", results[f"concurrent{lanes}"], f"(largest batch so far {batches}, shared prefix tokens {engine.stats.shared_prefix_tokens})", flush=True)
    for size in (1, 8, 32):
        results[f"raw_generate{size}"] = raw_generate_rate(engine, prompts, size, args.repeats)
        print(f"raw_generate{size}", round(results[f"raw_generate{size}"], 3), "replies/s", flush=True)
    await policy.close()

    c32 = results["concurrent32"]["replies_per_s"]
    summary = {
        "concurrent32_over_sequential": round(c32 / results["sequential"]["replies_per_s"], 2),
        "concurrent32_over_raw_generate": round(c32 / results["raw_generate32"], 2),
        "concurrent8_over_raw_generate": round(results["concurrent8"]["replies_per_s"] / results["raw_generate8"], 2),
        "sequential_moves_per_s": round(results["sequential"]["replies_per_s"], 3),
        "concurrent1_moves_per_s": round(results["concurrent1"]["replies_per_s"], 3),
        "concurrent8_moves_per_s": round(results["concurrent8"]["replies_per_s"], 3),
        "concurrent32_moves_per_s": round(c32, 3),
        "raw_generate8_moves_per_s": round(results["raw_generate8"], 3),
        "raw_generate32_moves_per_s": round(results["raw_generate32"], 3),
        "max_new_tokens": args.max_new_tokens,
        "policy": policy_kind,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main())
