"""`litellm:PROVIDER/MODEL`: 100+ providers through LiteLLM (keys from their usual variables)."""

from __future__ import annotations

import os
from typing import Any

from arena.llm.llm_policy import LITELLM_PARAMS, Completion, LLMSettings, display_name, reject_choice_mode
from arena.llm.prompting import Message
from arena.llm.remote_policy import RemotePolicy, api_key_from_env, completion_from_response
from arena.policy import Policy, PolicySpec, PolicySpecError


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


class LiteLLMPolicy(RemotePolicy):
    """`litellm:PROVIDER/MODEL` via `litellm.acompletion` (keys from LiteLLM's usual env vars)."""

    api = "litellm"  # the reasoning budget goes as LiteLLM's own arguments (reasoning_effort, thinking)

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
        completion = completion_from_response(response)
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


def _check_reasoning_params(spec: PolicySpec, settings: LLMSettings) -> None:
    """A reasoning budget LiteLLM would refuse for this provider and model (UnsupportedParamsError
    at the first move) is refused now, in one line."""
    wanted = [name for name, value in (("reasoning_effort", settings.reasoning.effort), ("thinking", settings.reasoning.thinking_budget)) if value is not None]
    if not wanted:
        return
    litellm = _litellm()
    try:
        model, provider, _, _ = litellm.get_llm_provider(spec.target)
        supported = set(litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or [])
    except Exception:  # a provider LiteLLM cannot name: let the call say what it thinks
        return
    for name in wanted:
        if name not in supported:
            param = "thinking_budget" if name == "thinking" else name
            raise PolicySpecError(
                f"policy spec {spec.text!r}: {param}: LiteLLM sends no {name} parameter to {spec.target} "
                f"(its {provider} provider takes {'reasoning_effort' if 'reasoning_effort' in supported else 'neither reasoning parameter'} for this model)"
            )


def make_litellm(spec: PolicySpec) -> Policy:
    settings = LLMSettings.from_spec(spec, LITELLM_PARAMS, default_max_new_tokens=256)
    reject_choice_mode(spec, settings)
    if "/" not in spec.target:
        raise PolicySpecError(f"policy spec {spec.text!r}: name PROVIDER/MODEL, e.g. litellm:anthropic/claude-3-5-haiku-latest")
    api_key = api_key_from_env(spec, None)  # else LiteLLM reads the provider's own variable
    _check_reasoning_params(spec, settings)
    return display_name(LiteLLMPolicy(spec.target, settings, api_base=spec.params.get("api_base") or None, api_key=api_key), spec)
