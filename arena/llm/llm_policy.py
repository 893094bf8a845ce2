"""The move loop every LLM player shares, and its settings: the OpenAI (openai_policy.py), LiteLLM
(litellm_policy.py) and local (local_policy.py) kinds differ only in how they complete a chat.

`LLMPolicy.act` is the same for all of them: build the prompt from the MoveRequest (prompting.py),
ask the model in the chosen mode, find the move (parsing.py) and report tokens, cost and timing.
Subclasses only say how to complete a chat (`_complete`) and how to count tokens.

Modes (spec param `mode=`):
- text   free text; the move is parsed out of it.
- tools  the move as a call of `make_move(move)` whose schema enumerates the legal moves.
- json   structured output, `response_format` json_schema {"move": <enum of legal moves>}.
- choice local models only: the bare move is the whole reply, drawn among the legal moves with
         probability proportional to exp(log p(move as the reply) / temperature) (temperature 1 by
         default: the model's own probabilities; 0: the most likely move). Every move's chance is
         recorded in the turn's meta (`move_probs`), and `move_distribution` answers without a draw.
         The temperature may go up to 10 here; free-text turns of a choice-mode policy (games
         without a move list) sample at 1, the model's own distribution, as training does.
Parsing (spec param `parse=`): strict (default) takes only the bracketed answer or the structured
one; lenient also takes a legal move mentioned anywhere in prose (see parsing.py).
Free-text games (no legal-move list), or lists longer than providers accept in an enum, use text.
Local models answer tools/json by scoring every legal move (`engine.choose`): always legal.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any

from arena.llm.parsing import ParsedMove, parse_move, parse_structured
from arena.llm.prompting import (
    TOOL_NAME,
    Message,
    Mode,
    ObsMode,
    Prompt,
    PromptTooLarge,
    build_prompt,
    estimate_tokens,
)
from arena.llm.retry import RetryConfig, RetryStats
from arena.seeding import move_seed
from arena.policy import (
    MoveRequest,
    Policy,
    PolicyFailure,
    PolicyReply,
    PolicySpec,
    PolicySpecError,
    float_param,
    int_param,
    reject_unknown_params,
)

MAX_ENUM_MOVES = 500  # larger legal-move lists are asked in text mode (provider enum limits)
MAX_CHOICE_TEMPERATURE = 10.0  # = trainer's rollout.temperature cap, so every checkpoint's spec is valid
DEFAULT_REMOTE_CONTEXT = 32_000  # tokens assumed for a remote model unless `max_context=` says

COMMON_PARAMS = {"temperature", "top_p", "max_new_tokens", "max_tokens", "seed", "mode", "obs", "name", "max_context", "parse"}
PARSE_MODES = ("strict", "lenient")
REMOTE_PARAMS = COMMON_PARAMS | {"timeout", "max_retries", "retry_budget", "api_key_env"}
OPENAI_PARAMS = REMOTE_PARAMS | {"base_url"}
LITELLM_PARAMS = REMOTE_PARAMS | {"api_base"}
LOCAL_PARAMS = COMMON_PARAMS | {"engine"}


@dataclass
class Completion:
    """One answer from a model, whatever the backend."""

    content: str | None
    tool_arguments: str | None = None  # JSON text of the make_move call, in tools mode
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    finish_reason: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # backend facts for the turn record (choice: move_probs)


@dataclass
class LLMSettings:
    """Per-policy settings from the spec string."""

    temperature: float | None = None  # None: the provider's default (local: 0.7)
    top_p: float | None = None
    max_new_tokens: int = 256
    seed: int | None = None
    mode: Mode = Mode.TEXT
    obs: ObsMode = ObsMode.HISTORY
    max_context: int | None = None  # tokens; None: the model's own (local) or DEFAULT_REMOTE_CONTEXT
    lenient_parse: bool = False  # parse=lenient: a legal move merely mentioned in prose counts
    retry: RetryConfig = field(default_factory=RetryConfig)

    @classmethod
    def from_spec(cls, spec: PolicySpec, allowed: set[str], *, default_max_new_tokens: int) -> "LLMSettings":
        reject_unknown_params(spec, allowed)
        if "max_new_tokens" in spec.params and "max_tokens" in spec.params:
            raise PolicySpecError(f"policy spec {spec.text!r}: give max_new_tokens or max_tokens, not both")
        key = "max_tokens" if "max_tokens" in spec.params else "max_new_tokens"
        max_new = int_param(spec, key, default_max_new_tokens)
        settings = cls(
            temperature=_optional_float(spec, "temperature"),
            top_p=_optional_float(spec, "top_p"),
            max_new_tokens=int(max_new if max_new is not None else default_max_new_tokens),
            seed=int_param(spec, "seed", None),
            mode=_enum_param(spec, "mode", Mode, Mode.TEXT),
            obs=_enum_param(spec, "obs", ObsMode, ObsMode.HISTORY),
            max_context=int_param(spec, "max_context", None),
            lenient_parse=_parse_param(spec),
            retry=RetryConfig(
                max_retries=int(int_param(spec, "max_retries", RetryConfig.max_retries) or 0),
                budget_s=float_param(spec, "retry_budget", RetryConfig.budget_s),
                timeout_s=float_param(spec, "timeout", RetryConfig.timeout_s),
            ),
        )
        settings._check(spec)
        return settings

    def _check(self, spec: PolicySpec) -> None:
        def bad(message: str) -> PolicySpecError:
            return PolicySpecError(f"policy spec {spec.text!r}: {message}")

        # A choice-mode temperature flattens a draw among a few legal moves (self-play explores at
        # 5); a token-sampling one above 2 only writes noise.
        highest = MAX_CHOICE_TEMPERATURE if self.mode is Mode.CHOICE else 2
        if self.temperature is not None and not 0 <= self.temperature <= highest:
            raise bad(f"temperature must be between 0 and {highest:g}" + (" in mode=choice" if self.mode is Mode.CHOICE else ""))
        if self.top_p is not None and not 0 < self.top_p <= 1:
            raise bad("top_p must be in (0, 1]")
        if not 1 <= self.max_new_tokens <= 32_768:
            raise bad("max_new_tokens must be between 1 and 32768")
        if self.max_context is not None and self.max_context <= self.max_new_tokens:
            raise bad("max_context must be larger than max_new_tokens")
        if self.retry.max_retries < 0:
            raise bad("max_retries must be >= 0")
        if self.retry.timeout_s <= 0 or self.retry.budget_s <= 0:
            raise bad("timeout and retry_budget must be positive seconds")


def _optional_float(spec: PolicySpec, key: str) -> float | None:
    return float_param(spec, key, 0.0) if key in spec.params else None


def _parse_param(spec: PolicySpec) -> bool:
    value = (spec.params.get("parse") or "strict").lower()
    if value not in PARSE_MODES:
        raise PolicySpecError(f"policy spec {spec.text!r}: parse must be one of {', '.join(PARSE_MODES)}, not {value!r}")
    return value == "lenient"


def _enum_param(spec: PolicySpec, key: str, enum_type: Any, default: Any) -> Any:
    value = spec.params.get(key)
    if value is None:
        return default
    try:
        return enum_type(value.lower())
    except ValueError:
        choices = ", ".join(m.value for m in enum_type)
        raise PolicySpecError(f"policy spec {spec.text!r}: {key} must be one of {choices}, not {value!r}") from None




def move_tool(legal_moves: list[str]) -> dict[str, Any]:
    """The OpenAI tool definition: one function whose only argument enumerates the legal moves."""
    return {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "Play your move in the game.",
            "parameters": {
                "type": "object",
                "properties": {"move": {"type": "string", "enum": list(legal_moves), "description": "One of the legal moves."}},
                "required": ["move"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


def move_response_format(legal_moves: list[str]) -> dict[str, Any]:
    """The OpenAI structured-output format: {"move": <one of the legal moves>}."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "move",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"move": {"type": "string", "enum": list(legal_moves)}},
                "required": ["move"],
                "additionalProperties": False,
            },
        },
    }


class LLMPolicy(Policy):
    """The shared move loop of every LLM policy. Holds no per-match state."""

    def __init__(self, settings: LLMSettings):
        self.settings = settings

    # -- what subclasses provide -----------------------------------------------------------
    @abstractmethod
    async def _complete(self, messages: list[Message], mode: Mode, legal_moves: list[str] | None, seed: int | None) -> tuple[Completion, RetryStats]:
        """Ask the model. `mode` is the effective one (text for free-text games)."""

    async def _answer(self, request: MoveRequest, prompt: Prompt, mode: Mode, legal_moves: list[str] | None, seed: int | None) -> tuple[Completion, RetryStats]:
        """Ask the model for this move; policies that send more than messages override this."""
        return await self._complete(prompt.messages, mode, legal_moves, seed)

    def count_tokens(self, messages: list[Message]) -> int:
        return estimate_tokens(messages)

    def context_budget(self) -> int:
        """Prompt tokens allowed: the context minus room for the reply."""
        context = self.settings.max_context or DEFAULT_REMOTE_CONTEXT
        return max(context - self.settings.max_new_tokens, 1)

    # -- the move loop ----------------------------------------------------------------------
    def effective_mode(self, legal_moves: list[str] | None) -> Mode:
        if legal_moves is None or not legal_moves or len(legal_moves) > MAX_ENUM_MOVES:
            return Mode.TEXT
        return self.settings.mode

    def build_prompt(self, request: MoveRequest, mode: Mode) -> Prompt:
        try:
            return build_prompt(
                request, mode=mode, obs_mode=self.settings.obs, budget_tokens=self.context_budget(), count_tokens=self.count_tokens
            )
        except PromptTooLarge as exc:
            raise PolicyFailure(f"{self.name}: {exc}") from None

    async def act(self, request: MoveRequest) -> PolicyReply:
        legal = request.legal_moves
        mode = self.effective_mode(legal)
        prompt = self.build_prompt(request, mode)
        started = time.perf_counter()
        completion, stats = await self._answer(request, prompt, mode, legal, move_seed(self.settings.seed, request))
        latency = time.perf_counter() - started
        lenient = self.settings.lenient_parse
        if mode is Mode.TEXT:
            parsed = parse_move(completion.content or "", legal, lenient=lenient)
        elif mode is Mode.CHOICE:
            parsed = ParsedMove(completion.content or "", "choice")  # one of the legal moves by construction
        else:
            parsed = parse_structured(completion.tool_arguments, completion.content, legal, lenient=lenient)
        return PolicyReply(
            action=parsed.action,
            rejection=parsed.rejection,
            raw=_raw_text(completion),
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cost_usd=completion.cost_usd,
            meta=self._meta(mode, parsed, prompt, completion, stats, latency),
        )

    def _meta(self, mode: Mode, parsed: ParsedMove, prompt: Prompt, completion: Completion, stats: RetryStats, latency: float) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "mode": mode.value,
            "obs": self.settings.obs.value,
            "parse": parsed.method,
            "model_latency_s": round(latency, 6),
            "history_kept": prompt.history_kept,
        }
        if prompt.history_dropped:
            meta["history_dropped"] = prompt.history_dropped
        if completion.finish_reason:
            meta["finish_reason"] = completion.finish_reason
        meta.update(completion.meta)
        if stats.attempts > 1:
            meta["retries"] = stats.attempts - 1
            meta["retry_errors"] = list(stats.errors)
            meta["backoff_s"] = round(stats.waited_s, 3)
        return meta


def _raw_text(completion: Completion) -> str:
    """What the model wrote, as one readable string (a tool call is shown as a call)."""
    if completion.tool_arguments is not None:
        call = f"{TOOL_NAME}({completion.tool_arguments})"
        return f"{completion.content}\n{call}" if completion.content else call
    return completion.content or ""


def display_name(policy: Policy, spec: PolicySpec) -> Policy:
    name = spec.params.get("name")
    if name is not None:
        if not name.strip():
            raise PolicySpecError(f"policy spec {spec.text!r}: name must not be empty")
        policy.name = name.strip()
    return policy


def reject_choice_mode(spec: PolicySpec, settings: LLMSettings) -> None:
    if settings.mode is Mode.CHOICE:
        raise PolicySpecError(
            f"policy spec {spec.text!r}: mode=choice scores every legal move with the model's own probabilities, "
            "which only local models give (local, hf:MODEL); use mode=tools or mode=json here"
        )
