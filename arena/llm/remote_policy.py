"""What the OpenAI and LiteLLM policies share: sampling arguments, structured-output arguments, the
reasoning budget's arguments, the retry wrapper, the API key from the environment, and reading an
OpenAI-shaped reply (its reasoning fields and reasoning-token count included, reasoning.py).

Remote calls go through `call_with_retries` (retry.py): backoff with jitter, Retry-After, and a
hard cap after which `PolicyFailure` lets the game's rule decide the turn.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from abc import abstractmethod
from typing import Any, Awaitable, Callable
from urllib.parse import urlparse

from arena.llm.llm_policy import Completion, LLMPolicy, move_response_format, move_tool
from arena.llm.prompting import TOOL_NAME, Message, Mode
from arena.llm.reasoning import ReasoningBudget, reasoning_of_message, reported_reasoning_tokens
from arena.llm.retry import RetryStats, call_with_retries
from arena.policy import PolicySpec, PolicySpecError
from arena.redaction import redact, remember_secret

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def api_key_from_env(spec: PolicySpec, default_var: str | None) -> str | None:
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


class RemotePolicy(LLMPolicy):
    """Shared by OpenAI and LiteLLM: sampling arguments and the retry wrapper."""

    sleep: Callable[[float], Awaitable[Any]] = staticmethod(asyncio.sleep)  # tests record the waits
    api: str = "openai"  # how the reasoning budget is sent (ReasoningBudget.request_kwargs)

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

    async def _complete(
        self, messages: list[Message], mode: Mode, legal_moves: list[str] | None, seed: int | None, budget: ReasoningBudget
    ) -> tuple[Completion, RetryStats]:
        kwargs = {**self._sampling_kwargs(seed), **self._structured_kwargs(mode, legal_moves), **budget.request_kwargs(self.api)}
        return await call_with_retries(
            lambda timeout: self._request(messages, kwargs, timeout), self.settings.retry, what=self.provider, sleep=self.sleep
        )

    @abstractmethod
    async def _request(self, messages: list[Message], kwargs: dict[str, Any], timeout: float) -> Completion:
        """One attempt, no retries of its own."""


def completion_from_response(response: Any) -> Completion:
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
        reasoning=reasoning_of_message(message),
        reported_reasoning_tokens=reported_reasoning_tokens(usage),
    )


def host_of(url: str) -> str:
    """host[:port] of a URL, never its user-info (the provider label is shown and stored)."""
    parsed = urlparse(url)
    try:
        port = parsed.port
    except ValueError:
        port = None
    host = parsed.hostname or ""
    return (f"{host}:{port}" if port else host) or redact(url)
