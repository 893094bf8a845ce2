"""`openai:MODEL`: any OpenAI-compatible Chat Completions endpoint through the official SDK."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from arena.llm.llm_policy import OPENAI_PARAMS, Completion, LLMSettings, display_name, reject_choice_mode
from arena.llm.prompting import Message
from arena.llm.remote_policy import RemotePolicy, api_key_from_env, completion_from_response, host_of
from arena.policy import Policy, PolicySpec, PolicySpecError


class OpenAIPolicy(RemotePolicy):
    """`openai:MODEL`: any OpenAI-compatible Chat Completions endpoint via the official SDK."""

    def __init__(self, model: str, settings: LLMSettings, *, base_url: str | None, api_key: str | None, http_client: Any = None):
        super().__init__(settings)
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self._http_client = http_client  # tests inject an httpx.AsyncClient with a mock transport
        self.provider = f"openai:{host_of(base_url) if base_url else 'api.openai.com'}"
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

    def _sampling_kwargs(self, seed: int | None) -> dict[str, Any]:
        """OpenAI's own API takes the reply cap as `max_completion_tokens` (its reasoning models
        refuse `max_tokens`); other OpenAI-compatible servers get `max_tokens`, which all of them read."""
        kwargs = super()._sampling_kwargs(seed)
        if self.provider == "openai:api.openai.com":
            kwargs["max_completion_tokens"] = kwargs.pop("max_tokens")
        return kwargs

    async def _request(self, messages: list[Message], kwargs: dict[str, Any], timeout: float) -> Completion:
        response = await self._client().chat.completions.create(model=self.model, messages=messages, timeout=timeout, **kwargs)
        return completion_from_response(response)

    async def close(self) -> None:
        await super().close()
        clients, self._clients = self._clients, {}
        for client in clients.values():
            try:
                await client.close()
            except RuntimeError:  # its event loop is already gone
                pass


def make_openai(spec: PolicySpec) -> Policy:
    settings = LLMSettings.from_spec(spec, OPENAI_PARAMS, default_max_new_tokens=256)
    reject_choice_mode(spec, settings)
    if not spec.target:
        raise PolicySpecError(f"policy spec {spec.text!r}: name the model, e.g. openai:gpt-4o-mini")
    base_url = spec.params.get("base_url") or os.environ.get("OPENAI_BASE_URL") or None
    api_key = api_key_from_env(spec, "OPENAI_API_KEY")
    if not api_key and not base_url:
        raise PolicySpecError(
            f"policy spec {spec.text!r}: OPENAI_API_KEY is not set (or give base_url= for a server that needs no key)"
        )
    return display_name(OpenAIPolicy(spec.target, settings, base_url=base_url, api_key=api_key), spec)
