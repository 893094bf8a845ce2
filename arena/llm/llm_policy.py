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
Free-text games (no legal-move list), or lists longer than providers accept in an enum, use text.
Local models answer tools/json by scoring every legal move (`engine.choose`): always legal.

The harness around the model is spec parameters too (harness.py): `sampler=` (how many answers a
move asks for, samplers.py), `parser=` (how the move is read, parsers.py; `parse=` is its older
name), `prompt=` (what the prompt shows, prompt_variants.py); and for the API kinds the reasoning
budget (`reasoning_effort=`, `thinking_budget=`, reasoning.py). Reasoning is set apart from every
answer before it is read, counted, and a reply cut off while reasoning is asked once more, shorter.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, Iterable

from arena.llm import prompt_variants, reasoning
from arena.llm.harness import HARNESS_PARAMS, REASONING_PARAMS, Harness, harness_from_params
from arena.llm.parsers import MoveParser
from arena.llm.parsing import format_feedback
from arena.llm.prompt_variants import PromptVariant, PromptView
from arena.llm.prompting import (
    DEFAULT_VARIANT,
    TOOL_NAME,
    Message,
    Mode,
    ObsMode,
    Prompt,
    PromptTooLarge,
    build_prompt,
    estimate_tokens,
    rethink_turn,
    with_instruction,
)
from arena.llm.reasoning import ReasoningBudget
from arena.llm.retry import RetryConfig, RetryStats
from arena.llm.samplers import Draw, Sampled, draw_record
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
    public_text,
    reject_unknown_params,
)

MAX_ENUM_MOVES = 500  # larger legal-move lists are asked in text mode (provider enum limits)
MAX_CHOICE_TEMPERATURE = 10.0  # = trainer's rollout.temperature cap, so every checkpoint's spec is valid
DEFAULT_REMOTE_CONTEXT = 32_000  # tokens assumed for a remote model unless `max_context=` says

COMMON_PARAMS = {"temperature", "top_p", "max_new_tokens", "max_tokens", "seed", "mode", "obs", "name", "max_context"} | HARNESS_PARAMS
REMOTE_PARAMS = COMMON_PARAMS | {"timeout", "max_retries", "retry_budget", "api_key_env", *REASONING_PARAMS}
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
    reasoning: str = ""  # the trace beside the answer (a provider's field; `<think>` text once set apart)
    reported_reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens
    # Set when the reasoning is set apart (LLMPolicy._separate, reasoning.py):
    reasoning_tokens: int | None = None
    answer_tokens: int | None = None
    reasoning_estimated: bool = False  # reasoning_tokens estimated from the text's length
    unclosed_reasoning: bool = False  # the reply stopped inside a `<think>` block


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
    harness: Harness = field(default_factory=Harness)  # sampler=, parser= (parse=), prompt=
    reasoning: ReasoningBudget = field(default_factory=ReasoningBudget)  # reasoning_effort=, thinking_budget= (API kinds)
    retry: RetryConfig = field(default_factory=RetryConfig)

    @classmethod
    def from_spec(cls, spec: PolicySpec, allowed: set[str], *, default_max_new_tokens: int) -> "LLMSettings":
        reject_unknown_params(spec, allowed)
        if "max_new_tokens" in spec.params and "max_tokens" in spec.params:
            raise PolicySpecError(f"policy spec {spec.text!r}: give max_new_tokens or max_tokens, not both")
        key = "max_tokens" if "max_tokens" in spec.params else "max_new_tokens"
        max_new = int_param(spec, key, default_max_new_tokens)

        def bad(message: str) -> PolicySpecError:
            return PolicySpecError(f"policy spec {spec.text!r}: {message}")

        settings = cls(
            temperature=_optional_float(spec, "temperature"),
            top_p=_optional_float(spec, "top_p"),
            max_new_tokens=int(max_new if max_new is not None else default_max_new_tokens),
            seed=int_param(spec, "seed", None),
            mode=_enum_param(spec, "mode", Mode, Mode.TEXT),
            obs=_enum_param(spec, "obs", ObsMode, ObsMode.HISTORY),
            max_context=int_param(spec, "max_context", None),
            harness=harness_from_params(spec.params, bad),
            reasoning=reasoning.budget_from_params(spec.params, bad, int(max_new if max_new is not None else default_max_new_tokens)),
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
        self._check_harness(bad)

    def _check_harness(self, bad: Any) -> None:
        """Harness variants that cannot apply to this mode or observation, refused in one line."""
        harness = self.harness
        if self.mode is Mode.CHOICE and (harness.sampler.kind != "single" or harness.parser.kind != "strict"):
            raise bad("mode=choice draws one legal move from the model's own probabilities: it takes sampler=single and parser=strict")
        if not harness.prompt.list_moves and self.mode is not Mode.TEXT:
            raise bad(f"prompt={harness.prompt.name} needs mode=text: mode={self.mode.value} lists the legal moves in its schema or scores them")
        if self.obs is ObsMode.CHAT and harness.sampler.kind != "single":
            raise bad(f"sampler={harness.sampler.name} asks several times per move; obs=chat keeps one token chat per seat: use obs=history")


def _optional_float(spec: PolicySpec, key: str) -> float | None:
    return float_param(spec, key, 0.0) if key in spec.params else None


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
        self.parser = MoveParser(settings.harness.parser)

    # -- what subclasses provide -----------------------------------------------------------
    @abstractmethod
    async def _complete(
        self, messages: list[Message], mode: Mode, legal_moves: list[str] | None, seed: int | None, budget: ReasoningBudget
    ) -> tuple[Completion, RetryStats]:
        """Ask the model. `mode` is the effective one (text for free-text games); `budget` is the
        reasoning budget of this request (the spec's, or the length retry's shorter one)."""

    async def _answer(
        self, request: MoveRequest, prompt: Prompt, mode: Mode, legal_moves: list[str] | None, seed: int | None, budget: ReasoningBudget
    ) -> tuple[Completion, RetryStats]:
        """Ask the model for this move; policies that send more than messages override this."""
        return await self._complete(prompt.messages, mode, legal_moves, seed, budget)

    def count_tokens(self, messages: list[Message]) -> int:
        return estimate_tokens(messages)

    def count_text_tokens(self, text: str) -> tuple[int, bool]:
        """Tokens of `text` and whether that is an estimate (no tokenizer here: it is)."""
        return reasoning.estimate_text_tokens(text), True

    def context_budget(self) -> int:
        """Prompt tokens allowed: the context minus room for the reply."""
        context = self.settings.max_context or DEFAULT_REMOTE_CONTEXT
        return max(context - self.settings.max_new_tokens, 1)

    async def complete_text(self, messages: list[Message], seed: int | None) -> Completion:
        """One plain answer to `messages`, its reasoning set apart: a question that is not a move
        (parser=extractor asks this policy which move another reply chose)."""
        completion, _ = await self._complete(messages, Mode.TEXT, None, seed, self.settings.reasoning)
        return self._separate(completion)

    async def close(self) -> None:
        await self.parser.close()

    # -- the move loop ----------------------------------------------------------------------
    def effective_mode(self, legal_moves: list[str] | None) -> Mode:
        if legal_moves is None or not legal_moves or len(legal_moves) > MAX_ENUM_MOVES:
            return Mode.TEXT
        return self.settings.mode

    def build_prompt(self, request: MoveRequest, mode: Mode, variant: PromptVariant = DEFAULT_VARIANT) -> Prompt:
        try:
            return build_prompt(
                request, mode=mode, obs_mode=self.settings.obs, budget_tokens=self.context_budget(), count_tokens=self.count_tokens,
                variant=variant,
            )
        except PromptTooLarge as exc:
            raise PolicyFailure(f"{self.name}: {exc}") from None

    async def act(self, request: MoveRequest) -> PolicyReply:
        view = prompt_variants.view(self.settings.harness.prompt, request)  # the moves as the prompt shows them
        legal = view.request.legal_moves
        mode = self.effective_mode(legal)
        prompt = self.build_prompt(view.request, mode, view.variant)
        started = time.perf_counter()
        sampled = await self.settings.harness.sampler.run(
            lambda seed, follow_up: self._draw(view, prompt, mode, seed, follow_up),
            move_seed(self.settings.seed, request),
            verdict=lambda draw: self._verdict(view, draw),
            follow_up=lambda draw, feedback: rethink_turn(_raw_text(draw.completion), feedback, mode, view.request, view.variant),
        )
        return self._reply(view, mode, prompt, sampled, time.perf_counter() - started)

    async def _draw(self, view: PromptView, prompt: Prompt, mode: Mode, seed: int, follow_up: list[Message]) -> Draw:
        """One answer: asked (once more, shorter, when cut off while reasoning), its reasoning set
        apart, its move read."""
        if follow_up:
            prompt = _with_messages(prompt, [*prompt.messages, *follow_up])
        completion, calls, length_retry = await self._ask(view.request, prompt, mode, seed)
        parsed, parser_meta = await self.parser.read(completion, mode, view.request, seed)
        if parsed.rejection and not view.variant.list_moves:  # the feedback's example must not name an unlisted move
            parsed = dataclasses.replace(parsed, rejection=format_feedback([]))
        return Draw(completion, parsed, calls, length_retry, parser_meta)

    async def _ask(self, request: MoveRequest, prompt: Prompt, mode: Mode, seed: int) -> tuple[Completion, list[RetryStats], dict[str, Any] | None]:
        """The model's answer; a reply cut at the token limit while reasoning is asked once more
        with a shorter-reasoning request (the declared rule in reasoning.py)."""
        legal, budget = request.legal_moves, self.settings.reasoning
        first, stats = await self._answer(request, prompt, mode, legal, seed, budget)
        first = self._separate(first)
        if not reasoning.cut_while_reasoning(first.finish_reason, first.content or "", first.tool_arguments is not None, first.unclosed_reasoning):
            return first, [stats], None
        shorter = budget.shorter()
        if shorter.instruction:
            prompt = _with_messages(prompt, with_instruction(prompt.messages, reasoning.REASON_BRIEFLY, request, self.settings.harness.prompt))
        second, more = await self._answer(request, prompt, mode, legal, seed, shorter.budget)
        second = self._separate(second)
        record = {"how": shorter.how, "first": _cut_summary(first)}
        return _both_calls(first, second), [stats, more], record

    def _separate(self, completion: Completion) -> Completion:
        """The answer with its reasoning set apart (fields and `<think>` text) and counted."""
        split = reasoning.split_text(completion.content or "")
        trace = "\n\n".join(part for part in (completion.reasoning.strip(), split.reasoning) if part)
        counted = reasoning.count(completion.completion_tokens, completion.reported_reasoning_tokens, trace, self.count_text_tokens)
        return dataclasses.replace(
            completion, content=None if completion.content is None else split.answer, reasoning=trace,
            reasoning_tokens=counted.reasoning, answer_tokens=counted.answer, reasoning_estimated=counted.estimated,
            unclosed_reasoning=split.unclosed,
        )

    def _verdict(self, view: PromptView, draw: Draw) -> str | None:
        """Why this answer would be refused (the rethink sampler sends it back with this), or None."""
        parsed = draw.parsed
        if parsed.rejection:
            return parsed.rejection
        if parsed.matched:
            return None
        check = view.request.check_move
        if check is not None:
            try:
                return check(view.game_move(parsed.action))
            except Exception:  # the game cannot judge it now: let it judge the move itself
                return None
        if view.request.legal_moves is None:
            return None
        return f"{parsed.action[:40]!r} is not one of the legal moves"

    def _reply(self, view: PromptView, mode: Mode, prompt: Prompt, sampled: Sampled, latency: float) -> PolicyReply:
        chosen, completions = sampled.chosen, [d.completion for d in sampled.draws]
        return PolicyReply(
            action=view.game_move(chosen.parsed.action),
            rejection=chosen.parsed.rejection,
            raw=_raw_text(chosen.completion),
            prompt_tokens=_total(c.prompt_tokens for c in completions),
            completion_tokens=_total(c.completion_tokens for c in completions),
            cost_usd=_total(c.cost_usd for c in completions),
            meta=self._meta(view, mode, prompt, sampled, latency),
        )

    def _records_the_rendered_prompt(self, chosen: Draw) -> bool:
        """Whether the recorded prompt ids are the prompt's messages as rendered: not after a rethink
        (the ids also hold the model's earlier answers), a length retry (the ids carry the added
        instruction) or in obs=chat (the ids keep earlier replies' reasoning, the messages do not)."""
        return self.settings.harness.sampler.kind == "single" and not chosen.length_retry and self.settings.obs is not ObsMode.CHAT

    def _meta(self, view: PromptView, mode: Mode, prompt: Prompt, sampled: Sampled, latency: float) -> dict[str, Any]:
        chosen, draws = sampled.chosen, sampled.draws
        completion = chosen.completion
        meta: dict[str, Any] = {
            "mode": mode.value,
            "obs": self.settings.obs.value,
            "parse": chosen.parsed.method,
            "model_latency_s": round(latency, 6),
            "history_kept": prompt.history_kept,
        }
        if prompt.history_dropped:
            meta["history_dropped"] = prompt.history_dropped
        if completion.finish_reason:
            meta["finish_reason"] = completion.finish_reason
        meta.update(completion.meta)
        if "prompt_ids" in meta and view.request.private and self._records_the_rendered_prompt(chosen):
            meta["public_state"] = public_state(prompt.messages, view.request.legal_moves, view.request.private)
        meta["harness"] = {**self.settings.harness.describe(), **self.settings.reasoning.describe()}
        if view.variant.notation:
            meta["notation"] = view.variant.notation
        meta.update(_reasoning_meta(chosen, draws))
        meta.update(chosen.parser_meta)
        if self.settings.harness.sampler.kind != "single":
            meta["samples"] = [draw_record(d, _raw_text(d.completion)) for d in draws]
            meta.update(sampled.meta)
        calls = [stats for d in draws for stats in d.calls]
        if any(stats.attempts > 1 for stats in calls):
            meta["retries"] = sum(stats.attempts - 1 for stats in calls)
            meta["retry_errors"] = [error for stats in calls for error in stats.errors]
            meta["backoff_s"] = round(sum(stats.waited_s for stats in calls), 3)
        return meta


def public_state(messages: list[Message], legal_moves: list[str] | None, private: tuple[str, ...]) -> str:
    """A recorded turn's public state (turn meta "public_state", the trainer's algorithm.private_contrast):
    a digest of its prompt with the seat's secret phrases masked, and its legal moves. Two turns
    share it when they were the same question but for the private cards. Only the current secrets
    are masked: in a match of several hands with obs=history an earlier hand's card stays in the
    prompt, so such turns share a public state only with turns that held the same earlier cards."""
    shown = [[m["role"], public_text(m["content"], private)] for m in messages]
    return hashlib.blake2b(json.dumps([shown, legal_moves]).encode(), digest_size=16).hexdigest()


def _reasoning_meta(chosen: Draw, draws: list[Draw]) -> dict[str, Any]:
    """The move's reasoning and its token counts (every call of the move added up)."""
    meta: dict[str, Any] = {}
    if chosen.completion.reasoning:
        meta["reasoning"] = chosen.completion.reasoning[: reasoning.MAX_REASONING_CHARS]
    reasoning_tokens = _total(d.completion.reasoning_tokens for d in draws)
    if reasoning_tokens is not None:
        meta["reasoning_tokens"] = reasoning_tokens
        answer_tokens = _total(d.completion.answer_tokens for d in draws)
        if answer_tokens is not None:
            meta["answer_tokens"] = answer_tokens
        if any(d.completion.reasoning_estimated for d in draws):
            meta["reasoning_tokens_estimated"] = True
    if chosen.length_retry:
        meta["length_retry"] = chosen.length_retry
    return meta


def _total(values: Iterable[Any]) -> Any:
    """The sum of the known values; None when none is known (unknown is not zero)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _with_messages(prompt: Prompt, messages: list[Message]) -> Prompt:
    """A plain prompt of `messages` (never a token chat's ids: they no longer match)."""
    return Prompt(messages, prompt.history_kept, prompt.history_dropped, prompt.tokens)


def _cut_summary(completion: Completion) -> dict[str, Any]:
    """What the length retry's record keeps of the reply that was cut."""
    summary = {"finish_reason": completion.finish_reason, "completion_tokens": completion.completion_tokens,
               "reasoning_tokens": completion.reasoning_tokens, "reasoning_chars": len(completion.reasoning)}
    if completion.unclosed_reasoning:
        summary["unclosed_think"] = True
    return {k: v for k, v in summary.items() if v is not None}


def _both_calls(first: Completion, second: Completion) -> Completion:
    """The retry's answer, with the tokens and cost of both calls (what the move spent)."""
    return dataclasses.replace(
        second,
        prompt_tokens=_total([first.prompt_tokens, second.prompt_tokens]),
        completion_tokens=_total([first.completion_tokens, second.completion_tokens]),
        cost_usd=_total([first.cost_usd, second.cost_usd]),
        reasoning_tokens=_total([first.reasoning_tokens, second.reasoning_tokens]),
        answer_tokens=_total([first.answer_tokens, second.answer_tokens]),
        reasoning_estimated=first.reasoning_estimated or second.reasoning_estimated,
    )


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
