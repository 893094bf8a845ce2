"""Moves per second of the `local` policy on each engine (hf = transformers, vllm) in one run:
sequential play and 32 concurrent history-mode Tic-Tac-Toe matches, vLLM's prefix-cache hit rate,
start-up seconds and peak resident memory; with --detail also 1 and 8 concurrent matches and one
raw batched `generate` of the same size on the hf engine.

- Every match is `local` (seat 0) against `random` (seat 1), played by arena.match.play_match, so
  the measured rate is the local policy's replies (each act call, retries after invalid moves
  included) per second.
- Concurrent N: N lanes each play matches back to back, so N matches are always in flight (as in
  a league); the rate is replies completed / time of the last completion inside the window, which
  counts whole batches only.
- Sequential: one match at a time, one reply at a time.
- vLLM: the same matches with `engine=vllm` (token-in/token-out seat sessions, prefix caching);
  `cache_hit_rate` is vLLM's own counters (prompt tokens served from its prefix cache / looked up)
  over the 32-match run. Its history prompts repeat each earlier turn's legal-move line (the chat
  only grows), so they are somewhat longer than the hf engine's.
- Peak RSS: the bench process and all its children (vLLM's engine core and worker), sampled.
- Raw generate (--detail): the same prompts the policy sent (recorded during the runs), left padded, one plain
  `model.generate(do_sample=True)` with the policy's temperature / top_p / max_new_tokens, no queue,
  no policy, no game: the ceiling the engine is measured against. Median of --repeats.
- Bare vLLM (vllm in --engines): every request the 32-match vLLM run sent (its exact prompt ids
  and sampling settings, in the order they were sent) is replayed through a bare vLLM
  `LLMEngine`, started with the very EngineArgs of ours (arena.llm.engines.vllm.engine_args) after
  ours is shut down, 32 requests in flight: a new one is added as soon as one finishes. No games,
  no prompts to build, no asyncio. `arena_over_bare_vllm` = the arena's moves/s at 32 / the bare
  engine's replies/s over the same requests.

    .venv/bin/python -m bench.inference [--engines hf,vllm] [--window32 240] [--sequential-window 45]
        [--max-new-tokens 24] [--obs state|chat] [--detail [--window 90] [--repeats 3]]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import threading
import time
from typing import Any

from arena.llm.engines import Generation, SamplingParams, open_engine, shutdown_engines
from arena.match import play_match
from arena.policy import MoveRequest, Policy, PolicyReply, make_policy
from games.registry import make_game

GAME = "tictactoe"


def engine_of(policy: Policy) -> Any:
    return getattr(policy, "engine", None) or open_engine("local", "hf")


class Counting(Policy):
    """Delegates to a policy and stamps the completion time of every reply."""

    def __init__(self, inner: Policy, stamps: list[float]):
        self.inner, self.stamps = inner, stamps
        self.name, self.spec = inner.name, inner.spec

    async def act(self, request: MoveRequest) -> PolicyReply:
        reply = await self.inner.act(request)
        self.stamps.append(time.perf_counter())
        return reply


async def settle(engine: Any) -> None:
    """Wait until the engine has no work left (abandoned matches' requests)."""
    executor = getattr(engine, "_executor", None)
    if executor is not None:  # hf: the model thread runs one batch at a time
        await asyncio.get_running_loop().run_in_executor(executor, lambda: None)
        return
    while engine.stats.in_flight:  # vllm: aborted requests leave its engine thread
        await asyncio.sleep(0.05)


def record_requests(engine: Any, sink: list[tuple[list[int], SamplingParams]]) -> Any:
    """Keep every (prompt ids, params) sent to the engine; returns a function that stops it."""
    original = engine.chat_ids

    async def chat_ids(prompt_ids: list[int], params: SamplingParams, adapter: str | None = None) -> Generation:
        sink.append((list(prompt_ids), params))
        return await original(prompt_ids, params, adapter)

    engine.chat_ids = chat_ids
    return lambda: delattr(engine, "chat_ids")


def bare_vllm_rate(source: str, dtype: str, context: int, requests: list[tuple[list[int], SamplingParams]], in_flight: int, end_ids: list[int]) -> dict[str, Any]:
    """Replies/s of a bare vLLM LLMEngine (our EngineArgs) replaying `requests` in order with
    `in_flight` always running."""
    from vllm import SamplingParams as VLLMSampling
    from vllm.inputs import TokensPrompt
    from vllm.v1.engine.llm_engine import LLMEngine

    from arena.llm.engines.vllm import engine_args

    started = time.perf_counter()
    engine = LLMEngine.from_engine_args(engine_args(source, dtype=dtype, cuda=False, max_model_len=context, enable_lora=True))
    startup = time.perf_counter() - started
    queue = list(enumerate(requests))
    running = 0
    finished = 0
    tokens = 0

    def add() -> None:
        nonlocal running
        index, (ids, params) = queue.pop(0)
        sampling = VLLMSampling(temperature=params.temperature, top_p=params.top_p, max_tokens=params.max_new_tokens,
                                seed=params.seed, stop_token_ids=list(end_ids), skip_special_tokens=True)
        engine.add_request(f"bare-{index}", TokensPrompt(prompt_token_ids=ids), sampling)
        running += 1

    t0 = time.perf_counter()
    while queue and running < in_flight:
        add()
    while running:
        for output in engine.step():
            if output.finished:
                running -= 1
                finished += 1
                tokens += len(output.outputs[0].token_ids)
                if queue:
                    add()
    elapsed = time.perf_counter() - t0
    engine.engine_core.shutdown()
    return {"replies": finished, "seconds": round(elapsed, 2), "replies_per_s": finished / elapsed,
            "completion_tokens": tokens, "startup_s": round(startup, 1)}


def record_prompts(engine: Any, sink: list[tuple[list[dict], SamplingParams]]) -> None:
    """Keep every (messages, params) the policy sends, for the raw-generate comparison."""
    original = engine.chat

    async def chat(messages: list[dict], params: SamplingParams, adapter: str | None = None) -> Generation:
        sink.append((messages, params))
        return await original(messages, params, adapter)

    engine.chat = chat


async def run_lanes(policy: Policy, lanes: int, window_s: float, seed0: int) -> dict[str, Any]:
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
    # The engine may still be finishing abandoned requests: let it, so the next setting starts clean.
    await settle(engine_of(policy))
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


class PeakRSS:
    """Largest resident memory of this process plus its children (vLLM's engine core), sampled."""

    def __init__(self, every_s: float = 0.5):
        import psutil

        self.process = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every_s,), daemon=True)
        self._thread.start()

    def sample(self) -> int:
        import psutil

        total = 0
        for proc in [self.process, *self.process.children(recursive=True)]:
            try:
                total += proc.memory_info().rss
            except psutil.Error:  # a child that just exited
                pass
        self.peak = max(self.peak, total)
        return total

    def _run(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            self.sample()

    def stop(self) -> float:
        self._stop.set()
        self.sample()
        return round(self.peak / 2**30, 2)


async def run_engine(variant: str, args: argparse.Namespace) -> dict[str, Any]:
    """Start-up, sequential and 32-concurrent figures of one engine (plus hf details; vLLM in its
    default dtype: the bare-engine replay). `variant` is hf, vllm or vllm:DTYPE."""
    kind, _, dtype = variant.partition(":")
    if dtype:
        shutdown_engines()  # a fresh engine in that dtype
        os.environ["ARENA_DTYPE"] = dtype
    else:
        os.environ.pop("ARENA_DTYPE", None)
    spec = f"local,engine={kind},max_new_tokens={args.max_new_tokens},temperature={args.temperature}" + ("" if args.obs == "history" else f",obs={args.obs}")
    started = time.perf_counter()
    policy = make_policy(spec)
    out: dict[str, Any] = {"spec": spec, "startup_s": round(time.perf_counter() - started, 1)}
    print(f"{variant}: started in {out['startup_s']} s", flush=True)
    engine = policy.engine
    prompts: list[tuple[list[dict], SamplingParams]] = []
    if kind == "hf" and args.detail:
        record_prompts(engine, prompts)
    out["sequential"] = await run_lanes(policy, 1, args.sequential_window, seed0=1)
    print(variant, "sequential", out["sequential"], flush=True)
    lane_sets = (1, 8, 32) if kind == "hf" and args.detail else (32,)
    sent: list[tuple[list[int], SamplingParams]] = []
    for lanes in lane_sets:
        before = engine.prefix_cache_counters() if kind == "vllm" else (0, 0)
        window = {1: args.sequential_window, 8: args.window, 32: args.window32}[lanes]
        stop_recording = record_requests(engine, sent) if variant == "vllm" and lanes == 32 else None
        out[f"concurrent{lanes}"] = await run_lanes(policy, lanes, window, seed0=lanes * 1_000_000)
        if stop_recording is not None:
            stop_recording()
        if kind == "vllm":
            queries, hits = (now - then for now, then in zip(engine.prefix_cache_counters(), before))
            out[f"concurrent{lanes}"]["cache_hit_rate"] = round(hits / queries, 3) if queries else None
        print(variant, f"concurrent{lanes}", out[f"concurrent{lanes}"], flush=True)
    if kind == "vllm" and policy.chats is not None:
        out["token_chats"] = dict(vars(policy.chats.stats))
        print("vllm token chats", out["token_chats"], flush=True)
    if variant == "vllm" and sent:
        # Only the requests the 32-match window counted (sent before its last counted reply).
        counted = sent[: out["concurrent32"]["replies"]]
        source, dtype, context, end_ids = engine.source, engine.dtype, engine.context_length, list(engine.end_ids)
        await policy.close()
        shutdown_engines()
        out["bare32"] = bare_vllm_rate(source, dtype, context, counted, 32, end_ids)
        print("bare vllm, 32 in flight", out["bare32"], flush=True)
        return out
    if prompts:
        for size in (1, 8, 32):
            out[f"raw_generate{size}"] = raw_generate_rate(engine, prompts, size, args.repeats)
            print(f"raw_generate{size}", round(out[f"raw_generate{size}"], 3), "replies/s", flush=True)
    await policy.close()
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="hf,vllm", help="comma-separated: hf, vllm, vllm:bfloat16 (vLLM in another dtype than the default)")
    parser.add_argument("--window", type=float, default=90.0, help="seconds of 8 concurrent matches (--detail)")
    parser.add_argument("--window32", type=float, default=240.0, help="seconds for 32 concurrent matches (a batch of 32 long prompts takes a while on 2 cores)")
    parser.add_argument("--sequential-window", type=float, default=45.0, help="seconds of one-at-a-time play")
    parser.add_argument("--max-new-tokens", type=int, default=24)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--repeats", type=int, default=3, help="raw generate repeats (median, --detail)")
    parser.add_argument("--detail", action="store_true", help="hf engine: also 1 and 8 concurrent matches and raw generate")
    parser.add_argument("--obs", choices=["history", "state", "chat"], default="history",
                        help="the policy's observation mode: the whole match so far (default), the current state only (shorter prompts), "
                             "or the match as the token chat the model saw (obs=chat: what vLLM's prefix cache serves best)")
    args = parser.parse_args()
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if not engines or any(e.partition(":")[0] not in ("hf", "vllm") or (":" in e and not e.startswith("vllm:")) for e in engines):
        raise SystemExit(f"--engines: give hf, vllm and/or vllm:DTYPE, not {args.engines!r}")
    print(f"torch threads: {__import__('torch').get_num_threads()}; {platform.processor() or platform.machine()}, {os.cpu_count()} cpus", flush=True)

    memory = PeakRSS()
    results = {kind: await run_engine(kind, args) for kind in engines}
    summary: dict[str, Any] = {"max_new_tokens": args.max_new_tokens, "obs": args.obs, "peak_rss_gib": memory.stop()}
    for variant, out in results.items():
        name = variant.replace(":", "_")
        summary[f"{name}_startup_s"] = out["startup_s"]
        summary[f"{name}_sequential_moves_per_s"] = round(out["sequential"]["replies_per_s"], 3)
        summary[f"{name}_concurrent32_moves_per_s"] = round(out["concurrent32"]["replies_per_s"], 3)
    if "hf" in results and "vllm" in results:
        hf, vllm = results["hf"], results["vllm"]
        summary["vllm_over_hf_32"] = round(vllm["concurrent32"]["replies_per_s"] / hf["concurrent32"]["replies_per_s"], 2)
        summary["vllm_over_hf_sequential"] = round(vllm["sequential"]["replies_per_s"] / hf["sequential"]["replies_per_s"], 2)
    if "vllm" in results and "vllm:bfloat16" in results:
        summary["vllm_float32_over_bfloat16_32"] = round(
            results["vllm"]["concurrent32"]["replies_per_s"] / results["vllm:bfloat16"]["concurrent32"]["replies_per_s"], 3)
    if "vllm" in results:
        vllm_run = results["vllm"]
        summary["cache_hit_rate"] = vllm_run["concurrent32"]["cache_hit_rate"]
        if "token_chats" in vllm_run:
            summary["vllm_token_chats"] = vllm_run["token_chats"]
        if "bare32" in vllm_run:
            summary["bare_vllm_replies_per_s"] = round(vllm_run["bare32"]["replies_per_s"], 3)
            summary["arena_over_bare_vllm"] = round(vllm_run["concurrent32"]["replies_per_s"] / vllm_run["bare32"]["replies_per_s"], 3)
    hf = results.get("hf", {})
    if "raw_generate32" in hf:
        c32 = hf["concurrent32"]["replies_per_s"]
        summary["hf_concurrent32_over_sequential"] = round(c32 / hf["sequential"]["replies_per_s"], 2)
        summary["hf_concurrent32_over_raw_generate"] = round(c32 / hf["raw_generate32"], 2)
        summary["hf_concurrent8_over_raw_generate"] = round(hf["concurrent8"]["replies_per_s"] / hf["raw_generate8"], 2)
    print(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main())
