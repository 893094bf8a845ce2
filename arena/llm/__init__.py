"""LLM players: the `openai`, `litellm`, `hf` and `local` policy kinds.

Importing this package is cheap: it only registers the kinds. The SDKs, torch and the model load
when a policy of that kind is made (see arena/llm/policies.py, docs/policies.md).
"""

from __future__ import annotations

from arena.policy import Policy, PolicySpec, register_kind


def _openai(spec: PolicySpec) -> Policy:
    from arena.llm.policies import make_openai

    return make_openai(spec)


def _litellm(spec: PolicySpec) -> Policy:
    from arena.llm.policies import make_litellm

    return make_litellm(spec)


def _local(spec: PolicySpec) -> Policy:
    from arena.llm.policies import make_local

    return make_local(spec)


register_kind("openai", _openai, "openai:gpt-4o-mini[,base_url=URL,mode=tools]")
register_kind("litellm", _litellm, "litellm:anthropic/claude-3-5-haiku-latest[,mode=json]")
register_kind("hf", _local, "hf:Qwen/Qwen2.5-0.5B-Instruct or hf:BASE+path/to/lora")
register_kind("local", _local, "local[,temperature=0.7,max_new_tokens=48]")
