"""Reasoning kept apart from the answer: where it is found, how it is counted, the budget a spec
sends to the provider, and the rule for a reply cut off while the model was still reasoning.

Why apart: a model's thinking names many moves it rejects, so parsing it would play moves the
model never chose; and what a move costs depends on how long the model thought, which readers
compare across models (Game Arena records prompt, reasoning and answer tokens apart).

Where reasoning arrives (`separate`):
- a message field: `reasoning_content` (DeepSeek, vLLM, and LiteLLM's name for every provider's),
  `reasoning` (OpenRouter, newer vLLM), or LiteLLM's `thinking_blocks` (Anthropic's thinking blocks,
  `{"type": "thinking", "thinking": ...}`), read by `reasoning_of_message`;
- `<think>...</think>` (also `<thinking>`, `<reasoning>`) in the content, as open-weight models
  write it when no server-side parser splits it off; a `</think>` with no opening tag ends reasoning
  the chat template opened in the prompt (DeepSeek-R1's distills, Qwen3), so the text before it is
  reasoning; an opening tag never closed runs to the end of the reply;
- nowhere, only counted: OpenAI's reasoning models hide the trace and report its size in
  `usage.completion_tokens_details.reasoning_tokens`.
The trace goes to the turn's meta (`reasoning`, capped like the raw reply) and never to the parser.

Counting (`count`): `reasoning_tokens` is the provider's `completion_tokens_details.reasoning_tokens`
where it reports one; else the reasoning text counted by the model's tokenizer (local models); else
estimated as one token per 4 characters (OpenAI's rule of thumb for English text), capped at the
completion tokens, and marked `reasoning_tokens_estimated`. `answer_tokens` = completion tokens -
reasoning tokens.

Budgets (`ReasoningBudget`, spec parameters of the API kinds): `reasoning_effort=low|medium|high`
(OpenAI's parameter, which LiteLLM maps to each provider's) and `thinking_budget=N` tokens (sent as
Anthropic's `thinking={"type": "enabled", "budget_tokens": N}`; LiteLLM passes that to Anthropic and
turns it into Gemini's `thinkingBudget`; the openai kind sends it in the request body, as Anthropic's
OpenAI-compatible endpoint reads it).

The length retry (`cut_while_reasoning`, `ReasoningBudget.shorter`): a reply that stopped at the
token limit (`finish_reason == "length"`) with no answer yet (no text after the reasoning, no tool
call) or inside an unclosed `<think>` is asked ONCE more with a shorter-reasoning request: the
effort one step lower (high -> medium -> low); the thinking budget halved, not below 1024 tokens
(Anthropic's minimum); where neither can go lower, or the spec sets no budget (local models,
providers without one), the same request with an instruction to reason briefly. The retry's reply is
the move's reply, whatever it holds; the move's tokens and cost add both calls; the turn's meta
`length_retry` says what the first reply was and what was changed.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from arena.match import MAX_REPLY_CHARS

MAX_REASONING_CHARS = MAX_REPLY_CHARS  # stored like the raw reply: untrusted, capped
EFFORTS = ("low", "medium", "high")
MIN_THINKING_BUDGET = 1024  # Anthropic refuses a smaller budget_tokens
MAX_SPLIT_CHARS = 200_000  # a reply is untrusted: longer text is not searched for reasoning blocks
CHARS_PER_TOKEN = 4  # OpenAI's rule of thumb for English text, for reasoning no one counted
REASON_BRIEFLY = (
    "Your previous reply ran out of tokens before it stated a move. Reason briefly this time, "
    "then state your move."
)

_OPEN_THEN_CLOSE = re.compile(r"<(think|thinking|reasoning)>(.*?)(</\1>|$)", re.IGNORECASE | re.DOTALL)
_LONE_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)


@dataclass(frozen=True)
class SplitText:
    """A reply's text cut into the answer and the reasoning written inline."""

    answer: str
    reasoning: str
    unclosed: bool  # an opening tag without its closing tag: the reply stopped while reasoning


def split_text(text: str) -> SplitText:
    """`<think>` blocks (and a leading block closed by a lone `</think>`) out of `text`."""
    text = (text or "")[:MAX_SPLIT_CHARS]
    reasoning: list[str] = []
    first_close = _LONE_CLOSE.search(text)
    first_open = _OPEN.search(text)
    if first_close is not None and (first_open is None or first_close.start() < first_open.start()):
        # the chat template opened the block in the prompt; the reply starts inside it
        reasoning.append(text[: first_close.start()])
        text = text[first_close.end():]
    unclosed = False
    answer_parts: list[str] = []
    position = 0
    for match in _OPEN_THEN_CLOSE.finditer(text):
        answer_parts.append(text[position: match.start()])
        reasoning.append(match.group(2))
        unclosed = unclosed or not match.group(3)
        position = match.end()
    answer_parts.append(text[position:])
    return SplitText(" ".join(p.strip() for p in answer_parts if p.strip()), "\n\n".join(r.strip() for r in reasoning if r.strip()), unclosed)


def strip_reasoning(text: str) -> str:
    """The answer part of a reply: what the move parsers may read."""
    return split_text(text).answer


def reasoning_of_message(message: Any) -> str:
    """The reasoning a provider returned beside the content, in whichever field it uses."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if value is None and isinstance(message, dict):
            value = message.get(name)
        if isinstance(value, str) and value.strip():
            return value
    blocks = getattr(message, "thinking_blocks", None)
    if blocks is None and isinstance(message, dict):
        blocks = message.get("thinking_blocks")
    texts = []
    for block in blocks or []:
        thinking = block.get("thinking") if isinstance(block, dict) else getattr(block, "thinking", None)
        if isinstance(thinking, str) and thinking.strip():
            texts.append(thinking)
    return "\n\n".join(texts)


def reported_reasoning_tokens(usage: Any) -> int | None:
    """`usage.completion_tokens_details.reasoning_tokens`, where the provider reports it."""
    details = getattr(usage, "completion_tokens_details", None)
    if details is None and isinstance(usage, dict):
        details = usage.get("completion_tokens_details")
    value = getattr(details, "reasoning_tokens", None)
    if value is None and isinstance(details, dict):
        value = details.get("reasoning_tokens")
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def estimate_text_tokens(text: str) -> int:
    """One token per CHARS_PER_TOKEN characters, rounded up (0 for no text)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


@dataclass(frozen=True)
class TokenCount:
    reasoning: int | None
    answer: int | None
    estimated: bool


def count(completion_tokens: int | None, reported: int | None, reasoning: str, count_text: Callable[[str], tuple[int, bool]]) -> TokenCount:
    """Reasoning and answer tokens of one reply (see the module docstring for the order)."""
    if reported is not None:
        tokens, estimated = reported, False
    elif not reasoning:
        tokens, estimated = 0, False
    else:
        tokens, estimated = count_text(reasoning)
    if completion_tokens is not None:
        tokens = min(tokens, completion_tokens)
    answer = completion_tokens - tokens if completion_tokens is not None else None
    return TokenCount(tokens, answer, estimated)


def cut_while_reasoning(finish_reason: str | None, answer: str, has_tool_call: bool, unclosed: bool) -> bool:
    """The length-retry condition: stopped at the token limit with no answer yet, or inside an
    unclosed reasoning block."""
    return finish_reason == "length" and (unclosed or (not answer.strip() and not has_tool_call))


@dataclass(frozen=True)
class ShorterRequest:
    """What the length retry asks with."""

    budget: "ReasoningBudget"
    instruction: bool  # add REASON_BRIEFLY to the prompt
    how: str  # for the record: "reasoning_effort=low", "thinking_budget=2048", "instruction"


@dataclass(frozen=True)
class ReasoningBudget:
    """How much a reasoning model may think, as the spec asks the provider."""

    effort: str | None = None  # reasoning_effort
    thinking_budget: int | None = None  # tokens

    @property
    def is_set(self) -> bool:
        return self.effort is not None or self.thinking_budget is not None

    def describe(self) -> dict[str, Any]:
        """The spec parameters this budget came from, for the turn's harness record."""
        out: dict[str, Any] = {}
        if self.effort is not None:
            out["reasoning_effort"] = self.effort
        if self.thinking_budget is not None:
            out["thinking_budget"] = self.thinking_budget
        return out

    def request_kwargs(self, api: str) -> dict[str, Any]:
        """Arguments for one request: `api` is "openai" (the SDK: `thinking` travels in extra_body)
        or "litellm" (its own `thinking` argument)."""
        kwargs: dict[str, Any] = {}
        if self.effort is not None:
            kwargs["reasoning_effort"] = self.effort
        if self.thinking_budget is not None:
            thinking = {"type": "enabled", "budget_tokens": self.thinking_budget}
            if api == "openai":
                kwargs["extra_body"] = {"thinking": thinking}
            else:
                kwargs["thinking"] = thinking
        return kwargs

    def shorter(self) -> ShorterRequest:
        """The declared length-retry request (module docstring)."""
        if self.effort is not None and self.effort != EFFORTS[0]:
            lower = EFFORTS[EFFORTS.index(self.effort) - 1]
            return ShorterRequest(ReasoningBudget(effort=lower), False, f"reasoning_effort={lower}")
        if self.thinking_budget is not None and self.thinking_budget > MIN_THINKING_BUDGET:
            halved = max(self.thinking_budget // 2, MIN_THINKING_BUDGET)
            return ShorterRequest(ReasoningBudget(thinking_budget=halved), False, f"thinking_budget={halved}")
        return ShorterRequest(self, True, "instruction")


def budget_from_params(params: dict[str, str], bad: Callable[[str], Exception], max_new_tokens: int) -> ReasoningBudget:
    """`reasoning_effort=` and `thinking_budget=` of a spec, checked; `bad(message)` is the spec error."""
    effort = params.get("reasoning_effort")
    if effort is not None:
        effort = effort.strip().lower()
        if effort not in EFFORTS:
            raise bad(f"reasoning_effort must be one of {', '.join(EFFORTS)}, not {params['reasoning_effort']!r}")
    budget: int | None = None
    if "thinking_budget" in params:
        text = params["thinking_budget"].strip()
        if not text.isdigit():
            raise bad(f"thinking_budget must be a whole number of tokens (0 or more), not {params['thinking_budget']!r}")
        budget = int(text)
        if budget >= max_new_tokens:
            raise bad(f"thinking_budget ({budget}) must be below max_new_tokens ({max_new_tokens}): providers count thinking inside the reply's tokens")
    if effort is not None and budget is not None:
        raise bad("give reasoning_effort or thinking_budget, not both")
    return ReasoningBudget(effort, budget)
