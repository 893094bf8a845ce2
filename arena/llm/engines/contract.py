"""What every local-model engine gives a policy, a server and the trainer: one Protocol and the
values that cross it.

Two engines implement it: `HFEngine` (transformers + peft: batched `generate`, per-row LoRA,
choice scoring, the learner's own model) and `VLLMEngine` (vLLM: prefix caching and continuous
batching). Callers hold an `Engine` and never ask which one it is, except for what the contract
itself declares: `can_score` says whether `choose` runs there. Where it does not (vLLM's CPU
build, see vllm.py), the caller asks the registry for a scoring engine explicitly
(`registry.scoring_engine`) and names it in what it records.

The values (`SamplingParams`, `Generation`) are plain dataclasses so a reply's exact token ids
and log-probs travel untouched from the engine to the trainer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from arena.llm.model import ModelNotAvailable
from arena.llm.token_chats import ChatTemplate

MAX_NEW_TOKENS_CAP = 4096
ENGINE_KINDS = ("hf", "vllm")  # what an engine is
ENGINE_CHOICES = ("auto", *ENGINE_KINDS)  # what a spec's engine= may ask for


@dataclass
class SamplingParams:
    temperature: float = 0.7  # 0 = greedy
    top_p: float = 1.0
    max_new_tokens: int = 64
    seed: int | None = None
    # Also return each sampled token's log-prob under the distribution it was drawn from (after
    # temperature and top_p): Generation.completion_logprobs, what training compares its own with.
    logprobs: bool = False


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" (end of turn) or "length" (hit max_new_tokens)
    # The exact token ids (for training: the loss needs what was sampled, not a re-tokenization).
    # completion_ids include the end-of-turn token when finish_reason is "stop".
    prompt_ids: list[int] | None = None
    completion_ids: list[int] | None = None
    # chat with SamplingParams(logprobs=True): each sampled token's log-prob at the request's
    # temperature. choose(): the chosen option's per-token log-probs as the reply (temperature 1).
    completion_logprobs: list[float] | None = None
    # choose(): every option's total log-probability as the whole reply (temperature 1, in option
    # order) and every option's reply ids (tokens + end-of-turn); completion_ids is the chosen one's.
    option_logprobs: list[float] | None = None
    option_ids: list[list[int]] | None = None
    # Prompt tokens served from the engine's prefix cache (None: the engine keeps none).
    cached_prompt_tokens: int | None = None
    engine: str = ""  # the kind of engine that produced it ("hf" | "vllm")


class PromptTooLong(ValueError):
    """The prompt does not fit the model's context with room for the reply."""


class EngineUnavailable(ModelNotAvailable):
    """This engine cannot run here (not installed, or it did not start); the message says why."""


class CannotScore(RuntimeError):
    """`choose` asked of an engine whose `can_score` is False."""


@dataclass
class EngineStats:
    """Counters every engine keeps (tests, benchmarks, serve-model's /health)."""

    requests: int = 0  # chat and choose calls served
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # prompt tokens served from a prefix cache (hf: a shared prefix computed once)
    largest_batch: int = 0  # requests computed together
    busy_s: float = 0.0  # time spent computing (hf: the model thread; vLLM: engine steps)
    startup_s: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)  # engine-specific counters, named there


@runtime_checkable
class Engine(Protocol):
    """One model (plus LoRA adapters) behind an asyncio API shared by any number of event loops
    and threads of a process. Get one from `arena.llm.engines.open_engine`, never construct it."""

    kind: str  # "hf" | "vllm"
    base: str  # as named by the caller ("local", a hub id, a folder)
    tokenizer: Any
    template: ChatTemplate  # the chat template, whole or incremental (token chats)
    context_length: int
    dtype: str  # "float32" | "bfloat16" | ...: what the weights compute in
    device: str
    stats: EngineStats
    can_score: bool  # whether `choose` runs on this engine

    def encode(self, messages: list[dict]) -> list[int]:
        """The chat rendered with the template (reply header included) and tokenized."""

    def count_tokens(self, messages: list[dict]) -> int:
        """len(encode(messages))."""

    async def chat(self, messages: list[dict], params: SamplingParams, adapter: str | None = None) -> Generation:
        """The assistant's reply to `messages`."""

    async def chat_ids(self, prompt_ids: list[int], params: SamplingParams, adapter: str | None = None) -> Generation:
        """The reply to exact prompt token ids (token-in/token-out)."""

    async def choose(
        self, messages: list[dict], options: list[str], adapter: str | None = None, *, temperature: float = 0.0, seed: int | None = None
    ) -> tuple[str, Generation]:
        """One option as the whole reply, by its log-probability (argmax at 0, else a seeded draw
        from softmax(logp / T)); raises CannotScore where `can_score` is False."""

    @property
    def adapters(self) -> list[str]:
        """Keys of the loaded LoRA adapters."""

    def load_adapter(self, path: str) -> str:
        """Make a peft LoRA folder usable by its key (returned)."""

    def reload_adapter(self, path: str, weights_from: str | None = None) -> str:
        """The adapter addressed by `path` serves the weights in `weights_from` from now on."""

    def health(self) -> dict[str, Any]:
        """Counters and settings for logs and serve-model's /health."""

    def sleep(self) -> None:
        """Give accelerator memory back while the learner updates (vLLM's sleep mode on CUDA);
        a no-op where there is nothing to give."""

    def wake_up(self) -> None:
        """Undo `sleep` before the next requests."""

    async def close(self) -> None:
        """Release what this event loop holds (the model stays loaded for the process)."""

    def shutdown(self) -> None:
        """Stop the engine's threads and processes for good (idempotent)."""


def checked_params(params: SamplingParams) -> SamplingParams:
    """`params`, or a one-line ValueError naming the setting out of range."""
    if not isinstance(params, SamplingParams):
        raise TypeError("params must be an arena.llm.engines.SamplingParams")
    if not (params.temperature >= 0 and math.isfinite(params.temperature)):
        raise ValueError(f"temperature must be a finite number >= 0, got {params.temperature}")
    if not (0 < params.top_p <= 1):
        raise ValueError(f"top_p must be in (0, 1], got {params.top_p}")
    if not (1 <= params.max_new_tokens <= MAX_NEW_TOKENS_CAP):
        raise ValueError(f"max_new_tokens must be between 1 and {MAX_NEW_TOKENS_CAP}, got {params.max_new_tokens}")
    return params


def adapter_key(path: str) -> str:
    """How an adapter is addressed: its resolved folder when it exists locally, else the string."""
    candidate = Path(path).expanduser()
    return str(candidate.resolve()) if candidate.exists() else path


def end_of_turn_ids(base: str, tokenizer: Any, configured: Any) -> list[int]:
    """The tokenizer's end-of-sequence id plus the generation config's (an int or a list)."""
    ids: list[int] = []
    for value in [tokenizer.eos_token_id, *(configured if isinstance(configured, list) else [configured])]:
        if isinstance(value, int) and value not in ids:
            ids.append(value)
    if not ids:
        raise ModelNotAvailable(f"model {base!r} defines no end-of-sequence token")
    return ids
