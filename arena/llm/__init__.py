"""LLM players: the `openai`, `litellm`, `hf` and `local` policy kinds.

The kinds are lines in arena/policy.py's KINDS naming their factories in arena/llm/llm_policy.py, which
is imported (with the SDKs, torch and the model) only when a policy of that kind is made
(docs/policies.md).
"""
