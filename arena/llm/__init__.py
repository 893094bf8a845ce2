"""LLM players: the `openai`, `litellm`, `hf` and `local` policy kinds, and the engines under them.

    llm_policy.py      the move loop every LLM player shares, its settings and output schemas
    remote_policy.py   what the two API kinds share: retries, keys, reading a reply
    openai_policy.py   openai:MODEL (any OpenAI-compatible endpoint)
    litellm_policy.py  litellm:PROVIDER/MODEL
    local_policy.py    local, hf:MODEL[+ADAPTER] on arena.llm.engines
    prompting.py, parsing.py, token_chats.py, retry.py: prompts, move parsing, token chats, backoff
    harness.py         the harness as spec parameters: samplers.py (sampler=), parsers.py
                       (parser=), prompt_variants.py (prompt=)
    reasoning.py       reasoning set apart from the answer, counted, budgeted; the length retry

The kinds are lines in arena/policy.py's KINDS naming their factories, each imported (with its
SDK, torch and the model) only when a policy of that kind is made (docs/policies.md).
"""
