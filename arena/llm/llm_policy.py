"""LLM players: OpenAI-compatible APIs, LiteLLM, and local transformers models.

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

Remote calls go through `call_with_retries` (retry.py): backoff with jitter, Retry-After, and a
hard cap after which `PolicyFailure` lets the game's rule decide the turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from urllib.parse import urlparse

from arena.llm.parsing import ParsedMove, parse_move, parse_structured
from arena.llm.prompting import (
    TOOL_NAME,
    Message,
    Mode,
    ObsMode,
    Prompt,
    PromptTooLarge,
    build_prompt,
    current_message,
    estimate_tokens,
)
from arena.llm.engines import ENGINE_CHOICES, Engine, EngineOptions, EnginePreference, Generation, SamplingParams
from arena.llm.engines.registry import engine_kind, notice, open_engine, scoring_engine
from arena.llm.engines.scoring import choice_probabilities
from arena.llm.retry import RetryConfig, RetryStats, call_with_retries
from arena.llm.token_chats import TokenChatBook, TokenChatPrompt
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
from arena.redaction import redact, remember_secret

MAX_ENUM_MOVES = 500  # larger legal-move lists are asked in text mode (provider enum limits)
ENCODINGS_KEPT = 64  # local models: recent prompts whose ids are kept (LocalPolicy.encode)
MAX_CHOICE_TEMPERATURE = 10.0  # = trainer's rollout.temperature cap, so every checkpoint's spec is valid
DEFAULT_REMOTE_CONTEXT = 32_000  # tokens assumed for a remote model unless `max_context=` says
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

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


# ------------------------------------------------------------------------------- remote APIs


def _api_key_from_env(spec: PolicySpec, default_var: str | None) -> str | None:
    """The key from the env var named by api_key_env= (or the provider's usual one)."""
    var = spec.params.get("api_key_env")
    if var is not None:
        if not _ENV_NAME.match(var):
            # Do not echo the value: a user may have pasted the key itself here.
            raise PolicySpecError(f"{spec.kind} policy: api_key_env must name an environment variable (letters, digits, _)")
        value = os.environ.get(var)
        if not value:
            raise PolicySpecError(f"{spec.kind} policy: environment variable {var} (from api_key_env) is not set")
        remember_secret(value)  # whatever its name or shape, a provider echoing it gets it masked
        return value
    return os.environ.get(default_var) if default_var else None


class _RemotePolicy(LLMPolicy):
    """Shared by OpenAI and LiteLLM: sampling arguments and the retry wrapper."""

    sleep: Callable[[float], Awaitable[Any]] = staticmethod(asyncio.sleep)  # tests record the waits

    def _sampling_kwargs(self, seed: int | None) -> dict[str, Any]:
        s = self.settings
        kwargs: dict[str, Any] = {"max_tokens": s.max_new_tokens}
        if s.temperature is not None:
            kwargs["temperature"] = s.temperature
        if s.top_p is not None:
            kwargs["top_p"] = s.top_p
        # Providers are only sent a seed the spec asked for: some reject the parameter, and few
        # promise determinism; the local engine always gets one (arena.seeding).
        if seed is not None and s.seed is not None:
            kwargs["seed"] = seed
        return kwargs

    @staticmethod
    def _structured_kwargs(mode: Mode, legal_moves: list[str] | None) -> dict[str, Any]:
        if mode is Mode.TOOLS and legal_moves:
            return {"tools": [move_tool(legal_moves)], "tool_choice": {"type": "function", "function": {"name": TOOL_NAME}}}
        if mode is Mode.JSON and legal_moves:
            return {"response_format": move_response_format(legal_moves)}
        return {}

    async def _complete(self, messages: list[Message], mode: Mode, legal_moves: list[str] | None, seed: int | None) -> tuple[Completion, RetryStats]:
        kwargs = {**self._sampling_kwargs(seed), **self._structured_kwargs(mode, legal_moves)}
        return await call_with_retries(
            lambda timeout: self._request(messages, kwargs, timeout), self.settings.retry, what=self.provider, sleep=self.sleep
        )

    @abstractmethod
    async def _request(self, messages: list[Message], kwargs: dict[str, Any], timeout: float) -> Completion:
        """One attempt, no retries of its own."""


def _completion_from_response(response: Any) -> Completion:
    """An OpenAI-shaped chat completion (the SDK's or LiteLLM's ModelResponse) -> Completion."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        return Completion(content="")
    message = choices[0].message
    arguments = None
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        if function is not None and getattr(function, "name", None) == TOOL_NAME:
            arguments = getattr(function, "arguments", None)
            break
    usage = getattr(response, "usage", None)
    return Completion(
        content=getattr(message, "content", None),
        tool_arguments=arguments if isinstance(arguments, str) else (json.dumps(arguments) if arguments is not None else None),
        prompt_tokens=getattr(usage, "prompt_tokens", None),
        completion_tokens=getattr(usage, "completion_tokens", None),
        finish_reason=getattr(choices[0], "finish_reason", None),
    )


def _host(url: str) -> str:
    """host[:port] of a URL, never its user-info (the provider label is shown and stored)."""
    parsed = urlparse(url)
    try:
        port = parsed.port
    except ValueError:
        port = None
    host = parsed.hostname or ""
    return (f"{host}:{port}" if port else host) or redact(url)


class OpenAIPolicy(_RemotePolicy):
    """`openai:MODEL`: any OpenAI-compatible Chat Completions endpoint via the official SDK."""

    def __init__(self, model: str, settings: LLMSettings, *, base_url: str | None, api_key: str | None, http_client: Any = None):
        super().__init__(settings)
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self._http_client = http_client  # tests inject an httpx.AsyncClient with a mock transport
        self.provider = f"openai:{_host(base_url) if base_url else 'api.openai.com'}"
        self._clients: dict[int, Any] = {}  # per event loop: an async client must not cross loops

    def _client(self) -> Any:
        from openai import AsyncOpenAI

        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None:
            client = AsyncOpenAI(
                api_key=self._api_key or "not-needed",  # local servers (vLLM, Ollama, serve-model) take any key
                base_url=self.base_url,
                max_retries=0,  # retries are ours: one policy for every provider, with a hard cap
                timeout=self.settings.retry.timeout_s,
                http_client=self._http_client,
            )
            self._clients = {k: v for k, v in self._clients.items() if k == id(loop)}
            self._clients[id(loop)] = client
        return client

    async def _request(self, messages: list[Message], kwargs: dict[str, Any], timeout: float) -> Completion:
        response = await self._client().chat.completions.create(model=self.model, messages=messages, timeout=timeout, **kwargs)
        return _completion_from_response(response)

    async def close(self) -> None:
        clients, self._clients = self._clients, {}
        for client in clients.values():
            try:
                await client.close()
            except RuntimeError:  # its event loop is already gone
                pass


_litellm_module: Any = None


def _litellm() -> Any:
    """Import LiteLLM once, offline-safe: its price table from the package, no telemetry."""
    global _litellm_module
    if _litellm_module is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        _litellm_module = litellm
    return _litellm_module


def _mcp_skip_kwargs(litellm: Any) -> dict[str, Any]:
    """LiteLLM (1.10x) routes every call with `tools` through its MCP gateway handler, which
    imports the optional `mcp` package and fails without it. Our tools are plain functions, so
    skip that handler when `mcp` is absent and this LiteLLM knows the (private) switch."""
    import importlib.util
    import inspect

    if importlib.util.find_spec("mcp") is not None:
        return {}
    try:
        completion = inspect.unwrap(litellm.main.completion)
        known = "_skip_mcp_handler" in completion.__code__.co_consts
    except AttributeError:
        known = False
    return {"_skip_mcp_handler": True} if known else {}


class LiteLLMPolicy(_RemotePolicy):
    """`litellm:PROVIDER/MODEL` via `litellm.acompletion` (keys from LiteLLM's usual env vars)."""

    def __init__(self, model: str, settings: LLMSettings, *, api_base: str | None, api_key: str | None):
        super().__init__(settings)
        self.model = model
        self.api_base = api_base
        self._api_key = api_key
        self.provider = f"litellm:{model.split('/', 1)[0] if '/' in model else model}"
        # Imported now, not at the first move: the import takes seconds and would block the event
        # loop of every match in flight (their timeouts would fire during it).
        self._litellm = _litellm()

    async def _request(self, messages: list[Message], kwargs: dict[str, Any], timeout: float) -> Completion:
        litellm = self._litellm
        extra: dict[str, Any] = {}
        if self.api_base:
            extra["api_base"] = self.api_base
        if self._api_key:
            extra["api_key"] = self._api_key
        if "tools" in kwargs:
            extra.update(_mcp_skip_kwargs(litellm))
        response = await litellm.acompletion(
            model=self.model, messages=messages, timeout=timeout, num_retries=0, max_retries=0, **kwargs, **extra
        )
        completion = _completion_from_response(response)
        completion.cost_usd = self._cost(litellm, response)
        return completion

    @staticmethod
    def _cost(litellm: Any, response: Any) -> float | None:
        """The price of this call when LiteLLM knows the model's price, else None (not 0)."""
        try:
            cost = litellm.completion_cost(completion_response=response)
        except Exception:  # unknown model or provider: litellm raises rather than guessing
            return None
        return float(cost) if cost else None


# ------------------------------------------------------------------------------- local models


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
        self._encodings: dict[tuple[tuple[str, str], ...], list[int]] = {}  # recent prompts' ids (`encode`)
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

    def encode(self, messages: list[Message]) -> list[int]:
        """The prompt ids of `messages` (the chat template, tokenized). Fitting a prompt to the
        context counts the chosen messages, and the move then sends the same ones: the last few
        encodings are kept, so a move renders and tokenizes its prompt once, not three times."""
        key = tuple((m["role"], m["content"]) for m in messages)
        ids = self._encodings.get(key)
        if ids is None:
            ids = self._encodings[key] = self.engine.encode(messages)
            while len(self._encodings) > ENCODINGS_KEPT:
                self._encodings.pop(next(iter(self._encodings)))
        return ids

    def context_budget(self) -> int:
        context = min(self.settings.max_context or self.engine.context_length, self.engine.context_length)
        return max(context - self.settings.max_new_tokens, 1)

    def build_prompt(self, request: MoveRequest, mode: Mode) -> Prompt:
        book = self.chats
        if book is None or mode is not Mode.TEXT or not request.match_id:
            return super().build_prompt(request, mode)
        key = (request.match_id, request.player)
        last = request.history[-1] if request.history else None
        same_position = last is not None and bool(last.feedback) and last.observation == request.observation.text
        new_user = {"role": "user", "content": current_message(request, mode, include_observation=not same_position)}
        extended = book.extend(key, len(request.history), last.reply if last else None, new_user) if last else None
        if extended is not None and len(extended.ids) <= self.context_budget():
            book.count("incremental")
            return ChatTurn(extended.messages, len(request.history), 0, len(extended.ids), extended, key)
        prompt = build_prompt(request, mode=mode, obs_mode=ObsMode.HISTORY, budget_tokens=self.context_budget(), count_tokens=self.count_tokens)
        if last is None:
            how = "first"
        elif extended is not None or prompt.history_dropped:
            how = "trimmed"  # the grown chat no longer fits: history trimmed, rendered whole
        else:
            how = "fallback"  # no chat matches this history, or the template is not incremental
        book.count(how)
        whole = book.whole(prompt.messages, how)
        return ChatTurn(prompt.messages, prompt.history_kept, prompt.history_dropped, len(whole.ids), whole, key)

    async def _answer(self, request: MoveRequest, prompt: Prompt, mode: Mode, legal_moves: list[str] | None, seed: int | None) -> tuple[Completion, RetryStats]:
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
            self.chats.record(prompt.key, prompt.turn, generation.completion_ids or [], generation.text, len(request.history))
        return self._completion(generation), RetryStats(attempts=1)

    async def _complete(self, messages: list[Message], mode: Mode, legal_moves: list[str] | None, seed: int | None) -> tuple[Completion, RetryStats]:
        raise NotImplementedError("LocalPolicy answers in _answer")  # pragma: no cover - _answer never calls it

    @property
    def choice_temperature(self) -> float:
        """Choice mode's temperature: the spec's, else 1 (the model's own probabilities)."""
        return 1.0 if self.settings.temperature is None else self.settings.temperature

    async def move_distribution(self, request: MoveRequest) -> dict[str, float] | None:
        """In choice mode: every legal move's chance at this decision (one scoring, no draw)."""
        legal = request.legal_moves
        if self.effective_mode(legal) is not Mode.CHOICE or not legal:
            return None
        prompt = self.build_prompt(request, Mode.CHOICE)
        try:
            _, generation = await self.scorer.choose(prompt.messages, legal, self.adapter)
        except (ValueError, RuntimeError) as exc:
            raise PolicyFailure(f"{self.provider}: {type(exc).__name__}: {str(exc)[:300]}") from exc
        return dict(zip(legal, choice_probabilities(generation.option_logprobs or [], self.choice_temperature)))

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


# ------------------------------------------------------------------------------- factories


def _display_name(policy: Policy, spec: PolicySpec) -> Policy:
    name = spec.params.get("name")
    if name is not None:
        if not name.strip():
            raise PolicySpecError(f"policy spec {spec.text!r}: name must not be empty")
        policy.name = name.strip()
    return policy


def _reject_choice_mode(spec: PolicySpec, settings: LLMSettings) -> None:
    if settings.mode is Mode.CHOICE:
        raise PolicySpecError(
            f"policy spec {spec.text!r}: mode=choice scores every legal move with the model's own probabilities, "
            "which only local models give (local, hf:MODEL); use mode=tools or mode=json here"
        )


def make_openai(spec: PolicySpec) -> Policy:
    settings = LLMSettings.from_spec(spec, OPENAI_PARAMS, default_max_new_tokens=256)
    _reject_choice_mode(spec, settings)
    if not spec.target:
        raise PolicySpecError(f"policy spec {spec.text!r}: name the model, e.g. openai:gpt-4o-mini")
    base_url = spec.params.get("base_url") or os.environ.get("OPENAI_BASE_URL") or None
    api_key = _api_key_from_env(spec, "OPENAI_API_KEY")
    if not api_key and not base_url:
        raise PolicySpecError(
            f"policy spec {spec.text!r}: OPENAI_API_KEY is not set (or give base_url= for a server that needs no key)"
        )
    return _display_name(OpenAIPolicy(spec.target, settings, base_url=base_url, api_key=api_key), spec)


def make_litellm(spec: PolicySpec) -> Policy:
    settings = LLMSettings.from_spec(spec, LITELLM_PARAMS, default_max_new_tokens=256)
    _reject_choice_mode(spec, settings)
    if "/" not in spec.target:
        raise PolicySpecError(f"policy spec {spec.text!r}: name PROVIDER/MODEL, e.g. litellm:anthropic/claude-3-5-haiku-latest")
    api_key = _api_key_from_env(spec, None)  # else LiteLLM reads the provider's own variable
    return _display_name(LiteLLMPolicy(spec.target, settings, api_base=spec.params.get("api_base") or None, api_key=api_key), spec)


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
    return _display_name(LocalPolicy(base, adapter, settings, engine, preference=preference), spec)
