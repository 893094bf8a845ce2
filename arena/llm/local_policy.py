"""`local` (the shipped SmolLM2), `hf:MODEL_OR_PATH` and `hf:BASE+ADAPTER_DIR`: local models on the
process's engines (arena.llm.engines)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from arena.llm.engines import ENGINE_CHOICES, Engine, EngineOptions, EnginePreference, Generation, SamplingParams
from arena.llm.engines.registry import engine_kind, notice, open_engine, scoring_engine
from arena.llm.engines.scoring import choice_probabilities
from arena.llm import prompt_variants
from arena.llm.llm_policy import LOCAL_PARAMS, Completion, LLMPolicy, LLMSettings, display_name
from arena.llm.prompt_variants import PromptVariant
from arena.llm.prompting import DEFAULT_VARIANT, Message, Mode, ObsMode, Prompt, build_prompt, current_message
from arena.llm.reasoning import ReasoningBudget, split_text
from arena.llm.retry import RetryStats
from arena.llm.token_chats import TokenChatBook, TokenChatPrompt
from arena.policy import MoveRequest, Policy, PolicyFailure, PolicySpec, PolicySpecError
from arena.seeding import move_seed


@dataclass
class ChatTurn(Prompt):
    """A local prompt in `obs=chat`: the exact token ids to send (token-in/token-out)."""

    turn: TokenChatPrompt | None = None
    key: tuple[str, int] = ("", 0)


class LocalPolicy(LLMPolicy):
    """`local` (the shipped SmolLM2), `hf:MODEL_OR_PATH` and `hf:BASE+ADAPTER_DIR` on the
    process's engine for that base (`arena.llm.engines`; `engine=` picks it). Text mode generates;
    tools/json take the best-scored legal move; choice draws one by its score at
    `choice_temperature`. Moves are scored by `scoring_engine(engine)`: the engine itself, or the
    hf engine of the same base where the engine cannot score (vLLM); each turn's meta names the
    engine(s) it plays on (`engine`, `engine_label`).

    Both engines see the same prompt ids for the same request: the prompt is built from the
    request (prompting.py) and encoded by the model's chat template, whichever engine runs it.
    `obs=chat` keeps each seat's chat as token ids that only grow (token_chats.py): earlier turns
    are never re-rendered, which a prefix cache (vLLM) serves best.

    `record_tokens` (the trainer's setting) adds to each turn's meta the exact prompt and reply
    ids and the sampler's log-probs (for a choice draw: every legal move's reply ids and log-prob,
    and which was drawn), and seeds each draw by the match id too, so the games of a training
    group (one game seed) draw differently."""

    def __init__(
        self, base: str, adapter: str | None, settings: LLMSettings, engine: str = "auto", *,
        preference: EnginePreference | None = None, record_tokens: bool = False, options: EngineOptions | None = None,
    ):
        super().__init__(settings)
        self.base = base
        self.adapter = adapter
        self.provider = f"local:{base}"
        self.record_tokens = record_tokens
        # Loaded here so a missing model or adapter is one clear error before any match starts.
        self.engine: Engine = open_engine(base, engine_kind(engine, preference), [adapter] if adapter else None, options)
        # Moves are scored (choice, tools, json) where scoring_engine says: opened now, so the
        # policy's engine label is known before its first move and a missing engine fails here.
        self._scorer: Engine | None = None
        if settings.mode is not Mode.TEXT:
            self.scorer
        self.chats: TokenChatBook | None = TokenChatBook(self.engine.template) if settings.obs is ObsMode.CHAT else None

    @property
    def engine_kind(self) -> str:
        """The engine that generates this policy's replies ("hf" | "vllm")."""
        return self.engine.kind

    @property
    def engine_label(self) -> str:
        """Where this policy's moves come from, as every turn records it (`meta["engine"]`) and a
        report card shows it: the engine's kind, plus `+KIND` when another engine scores its moves
        ("vllm+hf": replies generated on vLLM, legal moves scored on hf)."""
        if self._scorer is None or self._scorer is self.engine:
            return self.engine.kind
        return f"{self.engine.kind}+{self._scorer.kind}"

    @property
    def scorer(self) -> Engine:
        """The engine that scores legal moves (choice, tools, json), opened on first need and said
        once where it is not the generating engine."""
        if self._scorer is None:
            self._scorer = scoring_engine(self.engine, [self.adapter] if self.adapter else None)
            if self._scorer is not self.engine:
                notice(f"{self.provider} ({self.settings.mode.value} mode): legal moves are scored on the {self._scorer.kind} "
                       f"engine (the {self.engine.kind} engine cannot score them); replies are generated on {self.engine.kind}")
        return self._scorer

    def count_tokens(self, messages: list[Message]) -> int:
        return len(self.encode(messages))

    def count_text_tokens(self, text: str) -> tuple[int, bool]:
        """Counted by the model's own tokenizer: not an estimate."""
        return len(self.engine.template.encode_text(text)), False

    def encode(self, messages: list[Message]) -> list[int]:
        """The prompt ids of `messages` (the chat template, tokenized). Fitting a prompt to the
        context counts the chosen messages, and the move then sends the same ones: the engine's
        template remembers its encodings (token_chats.ChatTemplate.encode), so a move renders and
        tokenizes its prompt once, not three times."""
        return self.engine.encode(messages)

    def context_budget(self) -> int:
        context = min(self.settings.max_context or self.engine.context_length, self.engine.context_length)
        return max(context - self.settings.max_new_tokens, 1)

    def build_prompt(self, request: MoveRequest, mode: Mode, variant: PromptVariant = DEFAULT_VARIANT) -> Prompt:
        book = self.chats
        if book is None or mode is not Mode.TEXT or not request.match_id:
            return super().build_prompt(request, mode, variant)
        key = (request.match_id, request.player)
        last = request.history[-1] if request.history else None
        same_position = last is not None and bool(last.feedback) and last.observation == request.observation.text
        new_user = {"role": "user", "content": current_message(request, mode, include_observation=not same_position, variant=variant)}
        extended = book.extend(key, len(request.history), last.reply if last else None, new_user) if last else None
        if extended is not None and len(extended.ids) <= self.context_budget():
            book.count("incremental")
            return ChatTurn(extended.messages, len(request.history), 0, len(extended.ids), extended, key)
        prompt = build_prompt(request, mode=mode, obs_mode=ObsMode.HISTORY, budget_tokens=self.context_budget(), count_tokens=self.count_tokens, variant=variant)
        if last is None:
            how = "first"
        elif extended is not None or prompt.history_dropped:
            how = "trimmed"  # the grown chat no longer fits: history trimmed, rendered whole
        else:
            how = "fallback"  # no chat matches this history, or the template is not incremental
        book.count(how)
        whole = book.whole(prompt.messages, how)
        return ChatTurn(prompt.messages, prompt.history_kept, prompt.history_dropped, len(whole.ids), whole, key)

    async def _answer(
        self, request: MoveRequest, prompt: Prompt, mode: Mode, legal_moves: list[str] | None, seed: int | None, budget: ReasoningBudget
    ) -> tuple[Completion, RetryStats]:
        """Local models take no reasoning budget (the spec refuses one): `budget` is unused."""
        if self.record_tokens:  # the games of a group share their match seed; the match id tells them apart
            seed = move_seed(f"{seed}:{request.match_id}", request)
        try:
            if mode is Mode.CHOICE and legal_moves:
                return await self._choice(prompt.messages, legal_moves, seed), RetryStats(attempts=1)
            if mode is not Mode.TEXT and legal_moves:
                return await self._structured(prompt.messages, mode, legal_moves), RetryStats(attempts=1)
            if isinstance(prompt, ChatTurn) and prompt.turn is not None:
                generation = await self.engine.chat_ids(prompt.turn.ids, self._sampling(seed), self.adapter)
            else:
                generation = await self.engine.chat_ids(self.encode(prompt.messages), self._sampling(seed), self.adapter)
        except (ValueError, RuntimeError) as exc:  # PromptTooLong, a model error: this move fails
            if isinstance(prompt, ChatTurn) and self.chats is not None:
                self.chats.forget(prompt.key)
            raise PolicyFailure(f"{self.provider}: {type(exc).__name__}: {str(exc)[:300]}") from exc
        if isinstance(prompt, ChatTurn) and self.chats is not None and prompt.turn is not None:
            # the ids keep the reasoning as generated; the text is the answer the match quotes back
            self.chats.record(prompt.key, prompt.turn, generation.completion_ids or [], split_text(generation.text).answer, len(request.history))
        return self._completion(generation), RetryStats(attempts=1)

    async def _complete(
        self, messages: list[Message], mode: Mode, legal_moves: list[str] | None, seed: int | None, budget: ReasoningBudget
    ) -> tuple[Completion, RetryStats]:
        """A plain generation (LLMPolicy.complete_text: an extractor's question)."""
        try:
            generation = await self.engine.chat_ids(self.encode(messages), self._sampling(seed), self.adapter)
        except (ValueError, RuntimeError) as exc:
            raise PolicyFailure(f"{self.provider}: {type(exc).__name__}: {str(exc)[:300]}") from exc
        return self._completion(generation), RetryStats(attempts=1)

    @property
    def choice_temperature(self) -> float:
        """Choice mode's temperature: the spec's, else 1 (the model's own probabilities)."""
        return 1.0 if self.settings.temperature is None else self.settings.temperature

    async def move_distribution(self, request: MoveRequest) -> dict[str, float] | None:
        """In choice mode: every legal move's chance at this decision (one scoring, no draw)."""
        view = prompt_variants.view(self.settings.harness.prompt, request)  # moves named as the prompt shows them
        legal = view.request.legal_moves
        if self.effective_mode(legal) is not Mode.CHOICE or not legal:
            return None
        prompt = self.build_prompt(view.request, Mode.CHOICE, view.variant)
        try:
            _, generation = await self.scorer.choose(prompt.messages, legal, self.adapter)
        except (ValueError, RuntimeError) as exc:
            raise PolicyFailure(f"{self.provider}: {type(exc).__name__}: {str(exc)[:300]}") from exc
        probabilities = choice_probabilities(generation.option_logprobs or [], self.choice_temperature)
        return {view.game_move(move): p for move, p in zip(legal, probabilities)}

    async def _choice(self, messages: list[Message], legal_moves: list[str], seed: int | None) -> Completion:
        """Draw a legal move by its score; the completion carries every move's chance (and, when
        recording tokens, what the learner needs to recompute the draw's probability)."""
        temperature = self.choice_temperature
        choice, generation = await self.scorer.choose(messages, legal_moves, self.adapter, temperature=temperature, seed=seed)
        probabilities = choice_probabilities(generation.option_logprobs or [], temperature)
        completion = self._completion(generation)
        completion.content = choice
        completion.meta.update({"choice_temperature": temperature, "move_probs": dict(zip(legal_moves, probabilities))})
        if self.record_tokens:
            completion.meta.update({"option_ids": generation.option_ids, "option_logprobs": generation.option_logprobs,
                                    "chosen": legal_moves.index(choice)})
        return completion

    async def _structured(self, messages: list[Message], mode: Mode, legal_moves: list[str]) -> Completion:
        """tools/json: the best-scored legal move, as the call or the JSON a provider would send."""
        choice, generation = await self.scorer.choose(messages, legal_moves, self.adapter)
        arguments = json.dumps({"move": choice})
        completion = self._completion(generation)
        completion.content = arguments if mode is Mode.JSON else None
        completion.tool_arguments = arguments if mode is Mode.TOOLS else None
        return completion

    def _sampling(self, seed: int | None) -> SamplingParams:
        s = self.settings
        if s.mode is Mode.CHOICE:  # the spec's temperature is the draw's among legal moves
            temperature = 1.0
        else:
            temperature = 0.7 if s.temperature is None else s.temperature
        return SamplingParams(
            temperature=temperature,
            top_p=1.0 if s.top_p is None else s.top_p,
            max_new_tokens=s.max_new_tokens,
            seed=seed,
            logprobs=self.record_tokens,
        )

    def _completion(self, generation: Generation) -> Completion:
        """The turn's completion, naming the engine that produced it; with `record_tokens`, also its
        exact ids and the sampler's per-token log-probs."""
        meta: dict[str, Any] = {"engine": self.engine_label}
        if self.record_tokens:
            meta["prompt_ids"] = list(generation.prompt_ids or [])
            meta["completion_ids"] = list(generation.completion_ids or [])
            if generation.completion_logprobs is not None:
                meta["completion_logprobs"] = list(generation.completion_logprobs)
        return Completion(
            content=generation.text,
            prompt_tokens=generation.prompt_tokens,
            completion_tokens=generation.completion_tokens,
            finish_reason=generation.finish_reason,
            meta=meta,
        )


def make_local(spec: PolicySpec) -> Policy:
    settings = LLMSettings.from_spec(spec, LOCAL_PARAMS, default_max_new_tokens=48)
    if spec.kind == "local":
        if spec.target:
            raise PolicySpecError(f"policy spec {spec.text!r}: `local` takes no model name; use hf:MODEL for others")
        base, adapter = "local", None
    else:
        if not spec.target:
            raise PolicySpecError(f"policy spec {spec.text!r}: name the model, e.g. hf:Qwen/Qwen2.5-0.5B-Instruct or hf:BASE+path/to/adapter")
        base, _, adapter_text = spec.target.partition("+")
        base, adapter = base.strip(), adapter_text.strip() or None
        if not base:
            raise PolicySpecError(f"policy spec {spec.text!r}: the base model before '+' is missing")
    engine = (spec.params.get("engine") or "").strip().lower()
    if engine and engine not in ENGINE_CHOICES:
        raise PolicySpecError(f"policy spec {spec.text!r}: engine must be one of {', '.join(ENGINE_CHOICES)}, not {engine!r}")
    preference = EnginePreference(*spec.defaults["engine"]) if "engine" in spec.defaults else None
    return display_name(LocalPolicy(base, adapter, settings, engine, preference=preference), spec)
