"""`arena serve-model`: one local model (plus LoRA adapters) behind an OpenAI-compatible endpoint.

A server above the core: it imports the engines (`arena.llm.engines`) and FastAPI; nothing below
imports it (tests/test_layers.py).

    cli.py     the command (register(app))
    server.py  the FastAPI app: /v1/chat/completions, /v1/models, /health, fault injection
    sse.py     the streamed form of a reply (server-sent events, as OpenAI's API sends them)
"""
