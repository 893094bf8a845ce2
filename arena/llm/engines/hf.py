"""The transformers ("hf") engine: one batching engine per process and base model, on transformers
and peft. It runs everywhere torch does, scores legal moves (`choose`), and its model is the one
the learner trains in place.

Concurrent matches (and `arena serve-model` clients) call `chat` / `choose`; each call puts a
request on the engine's queue and awaits its future. A worker task collects what is queued, waits
briefly for stragglers, and runs the batch on one dedicated thread so the event loop keeps serving:
ONE `generate` for all free-text requests of the batch (left padding) and, per group of
constrained choices that share a prompt prefix, one prefill + one scoring forward. Then it resolves
every future.

Why one generate fits requests with different settings:
- Sampling is done per row by `_RowSampler`, a logits processor that applies each row's own
  temperature and top_p and draws the token with each row's own `torch.Generator`, then hands
  generate a one-hot score row so its greedy step picks exactly that token. Temperature 0 = argmax.
- Each row stops at its own `max_new_tokens` (`_RowBudget` stopping criterion) or at end-of-turn.
- LoRA adapters: several peft adapters sit on the one base model; a batch mixes rows of different
  adapters and of the bare base through peft's per-row `adapter_names`, so checkpoints of one
  training run can play each other without loading the base twice.

Seeds: a request with a seed gets its own generator seeded with it, so its draws do not depend on
its batch companions. The limit: with left padding the logits of a row differ from an unbatched
run in the last float bits, so a near-tie can resolve differently when the batch shape changes.
Same requests in the same batch shape reproduce exactly.

Log-probs: with `SamplingParams(logprobs=True)` each sampled token's log-prob under the
distribution it was drawn from (after the row's temperature and top_p; greedy rows: the plain
softmax) is returned in `Generation.completion_logprobs`, as vLLM's processed log-probs are.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import math
import os
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import torch

from arena.llm.bounded_memo import BoundedMemo
from arena.llm.engines.contract import (
    EngineStats,
    Generation,
    PromptTooLong,
    SamplingParams,
    adapter_key,
    checked_params,
    end_of_turn_ids,
)
from arena.llm.engines.choice_memo import ChoiceMemo, ChoiceScores, weights_signature
from arena.llm.engines.scoring import (
    option_token_logprobs, pick_option, prefix_groups, prompt_and_option_token_logprobs, sharable_prefix, shares_prefix_on,
)
from arena.llm.model import LoadedModel, ModelNotAvailable, load_model
from arena.llm.token_chats import ChatTemplate

MAX_OPTIONS = 512  # per choose() call
MAX_OPTION_CHARS = 1000
BASE_ADAPTER = "__base__"  # peft's name for "no adapter" in a mixed batch
LOGITS_BUDGET_FLOATS = 64_000_000  # bound the (options x tokens x vocab) log-prob tensor of one chunk


@dataclass
class HFStats(EngineStats):
    """The common counters plus how the batches ran (cached_prompt_tokens: prompt tokens of a
    batch's shared prefix that were computed once instead of once per row)."""

    batches: int = 0
    generate_calls: int = 0
    choose_forwards: int = 0
    choice_memo_hits: int = 0  # choose() requests answered from scores of identical ones (ChoiceMemo)


@dataclass
class _Request:
    kind: str  # "chat" | "choose"
    prompt_ids: list[int]
    adapter: str  # peft adapter name, or BASE_ADAPTER
    future: asyncio.Future
    params: SamplingParams | None = None
    options: list[str] = field(default_factory=list)
    option_ids: list[list[int]] = field(default_factory=list)
    choice_temperature: float = 0.0  # choose(): 0 = the most likely option, else a draw
    generator: torch.Generator | None = None  # choose(): the seeded draw's generator


class _RowSampler:
    """Logits processor: per-row temperature, top_p and seeded draw; returns one-hot scores.
    With `record`, it also keeps each step's drawn tokens' log-probs (`steps`, one list per step)."""

    def __init__(self, temperatures: list[float], top_ps: list[float], generators: list[torch.Generator], record: bool = False):
        self.temperatures = temperatures
        self.top_ps = top_ps
        self.generators = generators
        self.record = record
        self.steps: list[list[float]] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        scores = scores.float()
        chosen = scores.argmax(dim=-1)
        logps = scores.log_softmax(-1).gather(1, chosen.unsqueeze(1)).squeeze(1) if self.record else None
        rows = [r for r, t in enumerate(self.temperatures) if t > 0]  # the others stay greedy
        if rows:
            index = torch.tensor(rows, device=scores.device)
            temps = torch.tensor([self.temperatures[r] for r in rows], device=scores.device).unsqueeze(1)
            probs = torch.softmax(scores[index] / temps, dim=-1)
            top_ps = torch.tensor([self.top_ps[r] for r in rows], device=scores.device).unsqueeze(1)
            if bool((top_ps < 1.0).any()):
                sorted_probs, order = probs.sort(dim=-1, descending=True)
                # keep the smallest prefix whose mass reaches top_p (always at least one token)
                sorted_probs = sorted_probs.masked_fill(sorted_probs.cumsum(-1) - sorted_probs >= top_ps, 0.0)
                probs = torch.zeros_like(probs).scatter_(1, order, sorted_probs)
            # Inverse-CDF draw with one uniform per row from that row's own generator.
            uniforms = torch.stack([torch.rand((), generator=self.generators[r]) for r in rows]).to(scores.device)
            cdf = probs.cumsum(-1)
            drawn = torch.searchsorted(cdf, (uniforms * cdf[:, -1]).unsqueeze(1), right=True).squeeze(1)
            drawn = drawn.clamp(max=probs.shape[1] - 1)
            chosen[index] = drawn
            if logps is not None:  # the drawn token's log-prob in the (renormalised) distribution it came from
                logps[index] = (probs.gather(1, drawn.unsqueeze(1)).squeeze(1) / cdf[:, -1]).log()
        if logps is not None:
            self.steps.append(logps.tolist())
        one_hot = torch.full_like(scores, -math.inf)
        one_hot.scatter_(1, chosen.unsqueeze(1), 0.0)
        return one_hot


class _RowBudget:
    """Stopping criterion: each row is done once it produced its own max_new_tokens, or as soon as
    its caller gave up (its future was cancelled: a client that disconnected, a timeout), so a
    batch nobody waits for any more stops at the next token instead of running to its budget."""

    def __init__(self, prompt_len: int, budgets: list[int], device: Any, futures: list[asyncio.Future] | None = None):
        self.prompt_len = prompt_len
        self.budgets = torch.tensor(budgets, device=device)
        self.futures = futures or []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any) -> torch.BoolTensor:
        done = (input_ids.shape[1] - self.prompt_len) >= self.budgets
        # Reading a future's state from the generating thread is safe: cancelled() only reads a flag.
        abandoned = [future.cancelled() for future in self.futures]
        if any(abandoned):
            done = done | torch.tensor(abandoned, device=done.device)
        return done


class _Batcher:
    """The queue and worker task of one event loop (an engine may serve several loops/threads)."""

    def __init__(self, engine: "HFEngine", loop: asyncio.AbstractEventLoop):
        self.engine = engine
        self.loop = loop
        self.pending: collections.deque[_Request] = collections.deque()
        self.arrived = asyncio.Event()
        self.expected = 1  # size of the previous batch: how many stragglers are worth waiting for
        self.task = loop.create_task(self._run(), name="arena-engine-batcher")

    def submit(self, request: _Request) -> None:
        self.pending.append(request)
        self.arrived.set()

    async def _wait_arrival(self, timeout: float) -> bool:
        self.arrived.clear()
        if self.pending:
            return True
        try:
            await asyncio.wait_for(self.arrived.wait(), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def _collect(self) -> list[_Request]:
        engine = self.engine
        while not self.pending:
            self.arrived.clear()
            await self.arrived.wait()
        batch: list[_Request] = []
        deadline = self.loop.time() + engine.max_wait_s
        while True:
            while self.pending and len(batch) < engine.max_batch:
                request = self.pending.popleft()
                if not request.future.done():  # its caller gave up (timeout, cancel)
                    batch.append(request)
            remaining = deadline - self.loop.time()
            if len(batch) >= engine.max_batch or remaining <= 0:
                break
            # Until the previous batch's size is reached, more requests are very likely on their
            # way (the same matches, one move later): wait for them. Past it, only a short gap.
            wait = remaining if len(batch) < self.expected else min(remaining, engine.idle_gap_s)
            if not await self._wait_arrival(wait):
                break
        return batch

    async def _run(self) -> None:
        try:
            while True:
                batch = await self._collect()
                if not batch:
                    continue
                self.expected = len(batch)
                try:
                    results = await self.loop.run_in_executor(self.engine._executor, self.engine._execute, batch)
                except Exception as exc:  # a failing batch fails its requests, never the worker
                    for request in batch:
                        if not request.future.done():
                            request.future.set_exception(exc)
                    continue
                for request, result in zip(batch, results):
                    if not request.future.done():
                        request.future.set_result(result)
        except asyncio.CancelledError:
            for request in self.pending:
                if not request.future.done():
                    request.future.cancel()
            raise


class HFEngine:
    """A transformers causal LM (plus optional LoRA adapters) behind a batching request queue.

    Get one with `arena.llm.engines.open_engine(base, "hf")`; all policies and servers of a process
    share it. Implements `arena.llm.engines.Engine`.
    """

    kind = "hf"
    can_score = True

    def __init__(
        self,
        base: str,
        *,
        max_batch: int = 32,
        max_wait_s: float = 0.05,
        idle_gap_s: float = 0.004,
        device: str | None = None,
    ):
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.base = base
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.idle_gap_s = idle_gap_s
        started = time.perf_counter()
        self.loaded: LoadedModel = load_model(base, device=device)
        self.model = self.loaded.model  # becomes a PeftModel once an adapter is loaded
        self.tokenizer = self.loaded.tokenizer
        self.device = self.loaded.device
        self.context_length: int = int(
            getattr(self.model.config, "max_position_embeddings", None) or min(self.tokenizer.model_max_length, 1 << 20)
        )
        self.dtype = str(self.loaded.dtype).removeprefix("torch.")
        # choose(): a prefix its prompts share runs once (the CPU), or each prompt runs whole in
        # the same forward as its moves (CUDA): `shares_prefix_on`, the learner's rule too
        self.share_prefix = shares_prefix_on(self.device)
        self.stats = HFStats()
        self._adapters: dict[str, str] = {}  # adapter key (resolved path) -> peft adapter name
        # (working directory, path as asked) -> peft adapter name: resolving the path on every
        # request was two thirds of a remembered choice's cost. A loaded folder keeps its name for
        # the engine's life (new weights come in place, `reload_adapter`); nothing here re-points
        # a symbolic link at another adapter.
        self._adapter_names: dict[tuple[str, str], str] = {}
        self._choice_memo = ChoiceMemo()
        self._option_ids = BoundedMemo()  # option text -> its reply ids (`option_ids`)
        # One computation (or adapter load) at a time. Code that changes the weights (the trainer's
        # optimizer step) holds it too, so no batch ever sees half-updated weights.
        self.model_lock = self._model_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="arena-engine")
        self._batchers: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Batcher]" = weakref.WeakKeyDictionary()
        self._batchers_lock = threading.Lock()
        self._end_ids = self._end_of_turn_ids()
        self.template = ChatTemplate(self.tokenizer, self._end_ids)
        self._closed = False
        self.stats.startup_s = time.perf_counter() - started

    # ---------------------------------------------------------------- public API

    @property
    def adapters(self) -> list[str]:
        """Keys (resolved paths) of the loaded adapters, in load order."""
        return list(self._adapters)

    def load_adapter(self, path: str) -> str:
        """Load a peft LoRA adapter folder onto the base model (once); returns its key."""
        key = adapter_key(path)
        with self._model_lock:
            if key in self._adapters:
                return key
            name = f"adapter{len(self._adapters)}"  # peft names become module keys: no dots allowed
            try:
                from peft import PeftModel

                if isinstance(self.model, PeftModel):
                    self.model.load_adapter(key, adapter_name=name)
                else:
                    self.model = PeftModel.from_pretrained(self.model, key, adapter_name=name)
            except (OSError, ValueError, RuntimeError) as exc:
                raise ModelNotAvailable(f"cannot load LoRA adapter {path!r} on {self.base!r}: {str(exc).splitlines()[0][:300]}") from None
            self.model.eval()
            self._adapters[key] = name
        return key

    def encode(self, messages: list[dict]) -> list[int]:
        """The chat rendered with the template (reply header included) and tokenized."""
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list of {'role': ..., 'content': ...}")
        return self.template.encode(messages)

    def adapter_name(self, path: str) -> str:
        """peft's name of a loaded adapter (its module keys hold it: `...lora_A.NAME.weight`)."""
        return self._adapters[adapter_key(path)]

    def count_tokens(self, messages: list[dict]) -> int:
        """Prompt tokens of `messages` rendered with the chat template, reply header included."""
        return len(self.encode(messages))

    async def chat(self, messages: list[dict], params: SamplingParams, adapter: str | None = None) -> Generation:
        """Generate the assistant's reply to `messages`."""
        return await self.chat_ids(self.encode(messages), params, adapter)

    async def chat_ids(self, prompt_ids: list[int], params: SamplingParams, adapter: str | None = None) -> Generation:
        """Generate from exact prompt token ids (token-in/token-out)."""
        params = checked_params(params)
        if not isinstance(prompt_ids, list) or not prompt_ids:
            raise ValueError("prompt_ids must be a non-empty list of token ids")
        prompt_ids = list(prompt_ids)
        if len(prompt_ids) + 1 > self.context_length:
            raise PromptTooLong(f"prompt has {len(prompt_ids)} tokens; the model's context is {self.context_length}")
        budget = min(params.max_new_tokens, self.context_length - len(prompt_ids))
        if budget != params.max_new_tokens:
            params = dataclasses.replace(params, max_new_tokens=budget)
        request = _Request("chat", prompt_ids, await self._adapter_name(adapter), self._new_future(), params=params)
        return await self._submit(request)

    def option_ids(self, options: list[str]) -> list[list[int]]:
        """Each option as the assistant's whole reply: its tokens plus end-of-turn, as `choose` scores
        it. A game's moves are few and asked for at every turn, so each option's ids are remembered."""
        return [list(self._one_option_ids(o)) for o in options]

    def _one_option_ids(self, option: str) -> tuple[int, ...]:
        ids = self._option_ids.get(option)
        if ids is None:
            ids = (*self.tokenizer(option, add_special_tokens=False)["input_ids"], self._end_ids[0])
            self._option_ids.put(option, ids)
        return ids

    async def choose(
        self, messages: list[dict], options: list[str], adapter: str | None = None, *, temperature: float = 0.0, seed: int | None = None
    ) -> tuple[str, Generation]:
        """One option as the assistant's whole reply, scored by its total log-probability.

        Scored as option tokens + end-of-turn, so an option that is a prefix of another ("e2" vs
        "e2e4") is not favoured just for being shorter. Temperature 0 takes the most likely
        option; otherwise option i is drawn with probability proportional to exp(logp_i / T)
        (at T = 1: the model's own probability of that reply, renormalised over the options),
        seeded by `seed` like chat's draws. The Generation carries every option's log-prob.
        """
        if not (temperature >= 0 and math.isfinite(temperature)):
            raise ValueError(f"temperature must be a finite number >= 0, got {temperature}")
        if not options:
            raise ValueError("choose() needs at least one option")
        if len(options) > MAX_OPTIONS:
            raise ValueError(f"choose() takes at most {MAX_OPTIONS} options, got {len(options)}")
        options = [str(o) for o in options]
        if any(len(o) > MAX_OPTION_CHARS for o in options):
            raise ValueError(f"choose() options are capped at {MAX_OPTION_CHARS} characters")
        prompt_ids = self.encode(messages)
        option_ids = self.option_ids(options)
        if len(prompt_ids) + max(len(ids) for ids in option_ids) > self.context_length:
            raise PromptTooLong(f"prompt has {len(prompt_ids)} tokens; the model's context is {self.context_length}")
        generator = None
        if temperature > 0:
            generator = torch.Generator()
            generator.manual_seed(seed if seed is not None else int(torch.randint(0, 2**62, (1,))))
        request = _Request(
            "choose", prompt_ids, await self._adapter_name(adapter), self._new_future(), options=options, option_ids=option_ids,
            choice_temperature=temperature, generator=generator,
        )
        return await self._submit(request)

    def reload_adapter(self, path: str, weights_from: str | None = None) -> str:
        """The adapter addressed by `path` now has the weights saved in `weights_from` (default:
        its own folder, after its files changed): copied into the loaded adapter in place, under
        the model lock, so no batch sees half of them."""
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        key = self.load_adapter(path)
        folder = adapter_key(weights_from) if weights_from else key
        weights = os.path.join(folder, "adapter_model.safetensors")
        if not os.path.isfile(weights):
            raise ModelNotAvailable(f"cannot reload LoRA adapter {path!r}: no adapter_model.safetensors in {folder!r}")
        state = load_file(weights, device=str(self.device))
        with self._model_lock:
            result = set_peft_model_state_dict(self.model, state, adapter_name=self._adapters[key])
        unexpected = list(getattr(result, "unexpected_keys", []) or [])
        if unexpected:
            raise ModelNotAvailable(f"LoRA weights in {folder!r} do not fit adapter {path!r}: unexpected {unexpected[:3]}")
        return key

    def health(self) -> dict[str, Any]:
        """Counters and settings for logs and serve-model's /health."""
        return {"engine": self.kind, "base": self.base, "device": str(self.device), "dtype": self.dtype,
                "max_batch": self.max_batch, "adapters": len(self._adapters), **dataclasses.asdict(self.stats)}

    def sleep(self) -> None:
        """Nothing to give back: the learner trains this very model."""

    def wake_up(self) -> None:
        """See `sleep`."""

    async def close(self) -> None:
        """Stop this loop's worker (the model stays loaded for the process)."""
        batcher = self._batchers.pop(asyncio.get_running_loop(), None)
        if batcher is not None:
            batcher.task.cancel()
            try:
                await batcher.task
            except asyncio.CancelledError:
                pass

    def shutdown(self) -> None:
        """Stop every loop's batcher and the model thread (idempotent); the engine serves nothing
        afterwards."""
        if self._closed:
            return
        self._closed = True
        with self._batchers_lock:
            batchers = list(self._batchers.values())
            self._batchers.clear()
        for batcher in batchers:
            try:
                batcher.loop.call_soon_threadsafe(batcher.task.cancel)
            except RuntimeError:  # that loop is closed already
                pass
        self._executor.shutdown(wait=False, cancel_futures=True)

    # ---------------------------------------------------------------- queue side

    def _new_future(self) -> asyncio.Future:
        return asyncio.get_running_loop().create_future()

    async def _submit(self, request: _Request) -> Any:
        if self._closed:
            raise RuntimeError(f"the hf engine for {self.base!r} was shut down")
        loop = asyncio.get_running_loop()
        with self._batchers_lock:
            batcher = self._batchers.get(loop)
            if batcher is None or batcher.task.done():
                batcher = self._batchers[loop] = _Batcher(self, loop)
        batcher.submit(request)
        return await request.future

    async def _adapter_name(self, adapter: str | None) -> str:
        if adapter is None or adapter == "":
            return BASE_ADAPTER
        asked = (os.getcwd(), adapter)  # a relative path names another folder from another directory
        name = self._adapter_names.get(asked)
        if name is not None:
            return name
        key = adapter_key(adapter)
        if key not in self._adapters:  # first use: load it off the event loop
            await asyncio.get_running_loop().run_in_executor(self._executor, self.load_adapter, adapter)
        name = self._adapter_names[asked] = self._adapters[key]
        return name

    def _end_of_turn_ids(self) -> list[int]:
        return end_of_turn_ids(self.base, self.tokenizer, getattr(self.model.generation_config, "eos_token_id", None))

    # ---------------------------------------------------------------- model thread side

    def _execute(self, batch: list[_Request]) -> list[Any]:
        """Runs on the engine thread: one generate for the chats, scoring for the choices."""
        started = time.perf_counter()
        results: dict[int, Any] = {}
        with self._model_lock, torch.inference_mode():
            chats = [i for i, r in enumerate(batch) if r.kind == "chat"]
            chooses = [i for i, r in enumerate(batch) if r.kind == "choose"]
            if chats:
                for i, generation in zip(chats, self._generate([batch[i] for i in chats])):
                    results[i] = generation
            if chooses:
                for i, choice in zip(chooses, self._choose([batch[i] for i in chooses])):
                    results[i] = choice
        self.stats.batches += 1
        self.stats.requests += len(batch)
        self.stats.largest_batch = max(self.stats.largest_batch, len(batch))
        self.stats.busy_s += time.perf_counter() - started
        return [results[i] for i in range(len(batch))]

    def _left_pad(self, sequences: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        width = max(len(s) for s in sequences)
        pad = self.tokenizer.pad_token_id
        ids = torch.full((len(sequences), width), pad, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            ids[row, width - len(seq):] = torch.tensor(seq, dtype=torch.long)
            mask[row, width - len(seq):] = 1
        return ids.to(self.device), mask.to(self.device)

    def _middle_pad(self, sequences: list[list[int]], shared: int) -> tuple[torch.Tensor, torch.Tensor]:
        """prefix | pads | suffix: positions come from the mask, so pads in the middle are invisible."""
        width = max(len(s) for s in sequences)
        ids = torch.full((len(sequences), width), self.tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):
            suffix = seq[shared:]
            ids[row, :shared] = torch.tensor(seq[:shared], dtype=torch.long)
            mask[row, :shared] = 1
            ids[row, width - len(suffix):] = torch.tensor(suffix, dtype=torch.long)
            mask[row, width - len(suffix):] = 1
        return ids.to(self.device), mask.to(self.device)

    def _pad_sharing_prefix(self, requests: list[_Request]) -> tuple[torch.Tensor, torch.Tensor, Any, int]:
        """The batch's prompts as (input_ids, attention_mask, prefix KV cache or None, its length).

        Prompts of concurrent matches share their system prompt: when they share at least
        MIN_SHARED_PREFIX tokens, its KV is computed once per adapter and the rows are padded in
        the middle (prefix | pads | own suffix) so every row reuses it; else they are left padded."""
        prompts = [r.prompt_ids for r in requests]
        shared = sharable_prefix(prompts)
        if not shared:
            input_ids, attention_mask = self._left_pad(prompts)
            return input_ids, attention_mask, None, 0
        input_ids, attention_mask = self._middle_pad(prompts, shared)
        cache = self._prefill_prefix(prompts[0][:shared], [r.adapter for r in requests])
        self.stats.cached_prompt_tokens += shared * (len(prompts) - 1)
        return input_ids, attention_mask, cache, shared

    def _prefill_prefix(self, prefix: list[int], names: list[str]) -> Any:
        """The KV cache of `prefix`, computed once per distinct adapter, then one row per request."""
        distinct = sorted(set(names))
        ids = torch.tensor([prefix] * len(distinct), dtype=torch.long, device=self.device)
        out = self.model(input_ids=ids, use_cache=True, logits_to_keep=1, **self._adapter_kwargs(distinct))
        cache = out.past_key_values
        cache.batch_select_indices(torch.tensor([distinct.index(n) for n in names], device=self.device))
        return cache

    def _adapter_kwargs(self, names: list[str]) -> dict[str, Any]:
        return {"adapter_names": names} if self._adapters else {}

    def _generate(self, requests: list[_Request]) -> list[Generation]:
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        input_ids, attention_mask, prefix_cache, _ = self._pad_sharing_prefix(requests)
        prefix_kwargs: dict[str, Any] = {"past_key_values": prefix_cache} if prefix_cache is not None else {}
        budgets = [r.params.max_new_tokens for r in requests]
        generators: list[torch.Generator] = []
        for r in requests:
            gen = torch.Generator()  # on CPU: the draw happens there (tiny next to the forward)
            gen.manual_seed(r.params.seed if r.params.seed is not None else int(torch.randint(0, 2**62, (1,))))
            generators.append(gen)
        record = any(r.params.logprobs for r in requests)
        sampler = _RowSampler([r.params.temperature for r in requests], [r.params.top_p for r in requests], generators, record)
        config = GenerationConfig(
            do_sample=False,  # _RowSampler already drew each token; greedy takes it
            max_new_tokens=max(budgets),
            pad_token_id=self.tokenizer.pad_token_id,
            eos_token_id=self._end_ids,
        )
        output = self.model.generate(
            input_ids=input_ids,
            attention_mask=attention_mask,
            generation_config=config,
            logits_processor=LogitsProcessorList([sampler]),
            stopping_criteria=StoppingCriteriaList([_RowBudget(input_ids.shape[1], budgets, input_ids.device, [r.future for r in requests])]),
            **prefix_kwargs,
            **self._adapter_kwargs([r.adapter for r in requests]),
        )
        self.stats.generate_calls += 1
        new_tokens = output[:, input_ids.shape[1]:].tolist()
        generations = []
        for row, (request, tokens, budget) in enumerate(zip(requests, new_tokens, budgets)):
            tokens = tokens[:budget]
            end = next((k for k, t in enumerate(tokens) if t in self._end_ids), None)
            if end is None:
                reply, finish, used = tokens, "length", len(tokens)
            else:
                reply, finish, used = tokens[:end], "stop", end + 1
            text = self.tokenizer.decode(reply, skip_special_tokens=True)
            logprobs = [step[row] for step in sampler.steps[:used]] if request.params.logprobs else None
            self.stats.prompt_tokens += len(request.prompt_ids)
            self.stats.completion_tokens += used
            generations.append(
                Generation(
                    text=text,
                    prompt_tokens=len(request.prompt_ids),
                    completion_tokens=used,
                    finish_reason=finish,
                    prompt_ids=list(request.prompt_ids),
                    completion_ids=tokens[:used],
                    completion_logprobs=logprobs,
                    engine="hf",
                )
            )
        return generations

    def _choose(self, requests: list[_Request]) -> list[tuple[str, Generation]]:
        """Score each distinct (adapter, prompt, options) once, remembered while the weights stay
        the same (`ChoiceMemo`), then draw every request's option with its own generator."""
        signature = weights_signature(self.model)
        keys = [ChoiceMemo.key(signature, r.adapter, r.prompt_ids, r.option_ids) for r in requests]
        scores: dict[Any, ChoiceScores] = {}
        missing: dict[Any, _Request] = {}
        for key, request in zip(keys, requests):
            known = scores.get(key) or self._choice_memo.get(key)
            if known is not None:
                scores[key] = known
            elif key not in missing:
                missing[key] = request
        self.stats.choice_memo_hits += len(requests) - len(missing)
        for key, computed in zip(missing, self._score_choices(list(missing.values()))):
            scores[key] = computed
            self._choice_memo.put(key, computed)
        return [self._choice_result(request, scores[key]) for key, request in zip(keys, requests)]

    def _score_choices(self, requests: list[_Request]) -> list[ChoiceScores]:
        vocab = int(self.model.config.vocab_size)
        results: dict[int, ChoiceScores] = {}
        # Seats' prompts differ from their first line (the role), so a batch of both seats' moves
        # shares almost nothing: where a shared prefix is run once, group the requests whose
        # prompts share one, and each group's chunks prefill it once.
        if not requests:  # every choice of the batch was remembered
            return []
        groups = prefix_groups([r.prompt_ids for r in requests]) if self.share_prefix else [list(range(len(requests)))]
        for group in groups:
            chunk: list[int] = []
            load = 0
            for i in group:  # chunks bound the option log-prob tensor's size
                cost = len(requests[i].option_ids) * max(len(ids) for ids in requests[i].option_ids) * vocab
                if chunk and load + cost > LOGITS_BUDGET_FLOATS:
                    results.update(zip(chunk, self._score_chunk([requests[j] for j in chunk])))
                    chunk, load = [], 0
                chunk.append(i)
                load += cost
            results.update(zip(chunk, self._score_chunk([requests[j] for j in chunk])))
        return [results[i] for i in range(len(requests))]

    def _prefill_prompts(self, requests: list[_Request]) -> tuple[torch.Tensor, torch.Tensor, Any]:
        """The next-token log-probs after each prompt [rows, vocab], the prompts' attention mask and
        their KV cache; a prefix all prompts share is computed once (`_pad_sharing_prefix`)."""
        names = [r.adapter for r in requests]
        input_ids, attention_mask, cache, shared = self._pad_sharing_prefix(requests)
        positions = (attention_mask.cumsum(-1) - 1).clamp(min=0)
        out = self.model(
            input_ids=input_ids[:, shared:],
            attention_mask=attention_mask,
            position_ids=positions[:, shared:],
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,  # only the last position's: a [rows, prompt, vocab] tensor is GBs
            **self._adapter_kwargs(names),
        )
        return out.logits[:, -1, :].float().log_softmax(-1), attention_mask, out.past_key_values

    def _score_chunk(self, requests: list[_Request]) -> list[ChoiceScores]:
        names = [r.adapter for r in requests]
        options = [r.option_ids for r in requests]
        row_kwargs = lambda owner: self._adapter_kwargs([names[i] for i in owner])  # noqa: E731
        prompts = [r.prompt_ids for r in requests]
        if self.share_prefix and sharable_prefix(prompts):
            # 1) Prefill every prompt once, their shared prefix once. 2) One row per request: its
            # options on the prompt's cache.
            first_logprobs, attention_mask, cache = self._prefill_prompts(requests)
            token_logprobs = option_token_logprobs(
                self.model, first_logprobs, attention_mask, cache, options, self.tokenizer.pad_token_id, row_kwargs,
            ).cpu()
            self.stats.choose_forwards += 2
        else:  # nothing shared: each prompt and its options in one forward
            token_logprobs = prompt_and_option_token_logprobs(
                self.model, prompts, options, self.tokenizer.pad_token_id, self.device, row_kwargs,
            ).cpu()
            self.stats.choose_forwards += 1
        results = []
        row = 0
        for request in requests:
            rows = token_logprobs[row : row + len(request.option_ids)].clone()
            results.append(ChoiceScores(totals=rows.sum(1), token_logprobs=rows))
            row += len(request.option_ids)
        return results

    def _choice_result(self, request: _Request, scores: ChoiceScores) -> tuple[str, Generation]:
        """The request's draw among its options and the Generation that records it."""
        picked = pick_option(scores.totals, request.choice_temperature, request.generator)
        n = len(request.option_ids[picked])
        self.stats.prompt_tokens += len(request.prompt_ids)
        self.stats.completion_tokens += n
        return (
            request.options[picked],
            Generation(
                text=request.options[picked],
                prompt_tokens=len(request.prompt_ids),
                completion_tokens=n,
                finish_reason="stop",
                prompt_ids=list(request.prompt_ids),
                completion_ids=list(request.option_ids[picked]),
                option_logprobs=[float(x) for x in scores.totals.tolist()],
                option_ids=[list(ids) for ids in request.option_ids],
                completion_logprobs=[float(x) for x in scores.token_logprobs[picked, :n].tolist()],
                engine="hf",
            ),
        )
