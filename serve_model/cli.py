"""`arena serve-model`: one local model (plus LoRA adapters) behind an OpenAI-compatible endpoint.

It runs on vLLM where vLLM runs (prefix caching: a client that resends its whole chat each turn
is served the earlier turns from the cache), else on the transformers engine, saying why; the
same server code (serve_model/server.py) fronts both."""

from __future__ import annotations

from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    app.command("serve-model")(serve_model_command)


def serve_model_command(
    model: str = typer.Argument("local", help="`local` (the shipped SmolLM2), a Hugging Face id or a model folder."),
    host: str = typer.Option("127.0.0.1", help="Interface to listen on (loopback by default; set ARENA_SERVE_MODEL_KEY to require a bearer key)."),
    port: int = typer.Option(8000, help="TCP port."),
    adapter: Optional[list[str]] = typer.Option(None, "--adapter", help="A peft LoRA folder to serve too (repeatable); select it by its path in `model`."),
    faults: str = typer.Option("", help='Fault injection for tests, e.g. "429=0.1,500=0.1,timeout=0.05,garbage=0.1".'),
    fault_seed: int = typer.Option(0, help="Seed of the fault draws (same seed, same sequence)."),
    fault_hang_s: float = typer.Option(120.0, help="How long an injected timeout hangs."),
    engine: Optional[str] = typer.Option(None, help="auto (vLLM where it runs, else hf), vllm or hf; default $ARENA_LOCAL_ENGINE, else auto."),
    max_batch: int = typer.Option(32, min=1, help="hf engine: most requests in one generate call."),
    max_wait_ms: float = typer.Option(50.0, min=0, help="hf engine: longest wait for stragglers before a batch starts."),
    log_level: str = typer.Option("warning", help="uvicorn log level."),
    max_tokens_cap: int = typer.Option(4096, "--max-tokens-cap", min=1, help="Largest max_tokens a request may ask for; above it the request is refused with 400."),
    max_request_kb: Optional[int] = typer.Option(None, "--max-request-kb", min=1, help="Largest request body (KiB); default: the model's context x 32 bytes, at least 64 KiB."),
    allowed_host: Optional[list[str]] = typer.Option(None, "--allowed-host", help="A Host name clients reach the server by, besides the bound address (repeatable; DNS-rebinding check)."),
    allow_origin: Optional[list[str]] = typer.Option(None, "--allow-origin", help="A browser origin allowed to POST, e.g. https://notebook.example (repeatable); none by default."),
) -> None:
    """Serve a local model over /v1/chat/completions and /v1/models (OpenAI-compatible).

    Example: arena serve-model local --port 8000 --adapter runs/ttt/checkpoint-200
    then point any OpenAI client at http://127.0.0.1:8000/v1 with model "local" (any api key).
    """
    from rich.console import Console

    from arena.user_errors import fail
    from arena.llm.engines import ENGINE_CHOICES, EngineOptions, open_engine, scoring_engine
    from arena.llm.engines.registry import engine_kind
    from serve_model.server import FaultConfig, ServeLimits
    from arena.policy import PolicySpecError

    console = Console(stderr=True, highlight=False)
    try:
        fault_config = FaultConfig.parse(faults, seed=fault_seed, hang_s=fault_hang_s) if faults else None
    except ValueError as exc:
        raise fail(f"--faults: {exc}")
    try:
        if engine is not None and engine.strip().lower() not in ENGINE_CHOICES:
            raise fail(f"--engine {engine!r}: must be one of {', '.join(ENGINE_CHOICES)}")
        kind = engine_kind(engine)
        import uvicorn

        from serve_model.server import create_app

        with console.status(f"loading {model} ..."):
            options = EngineOptions(max_batch=max_batch, max_wait_s=max_wait_ms / 1000)
            served_engine = open_engine(model, kind, adapter or [], options)
            # tools / json schemas with an enum are answered by scoring the enum values: on an engine
            # that cannot score (vLLM), the hf engine of the same base does it, and the line below says so
            scorer = scoring_engine(served_engine, adapter or [])
            limits = ServeLimits(max_tokens_cap=max_tokens_cap, max_request_bytes=max_request_kb * 1024 if max_request_kb else None,
                                 bind_host=host, allowed_hosts=tuple(allowed_host or ()), allowed_origins=tuple(allow_origin or ()))
            app = create_app(served_engine, served_name=model, adapters=adapter or [], faults=fault_config, scorer=scorer, limits=limits)
    except PolicySpecError as exc:  # a missing model or adapter, engine=vllm where it cannot run
        raise fail(str(exc))
    served = ", ".join([model, *(adapter or [])])
    how = "vLLM engine, prefix caching" if served_engine.kind == "vllm" else f"hf engine, max batch {max_batch}"
    if scorer is not served_engine:
        how += f"; tool and JSON-schema choices scored on the {scorer.kind} engine"
    console.print(f"serving {served} on http://{host}:{port}/v1 ({how})" + (f", faults {faults}" if faults else ""))
    uvicorn.run(app, host=host, port=port, log_level=log_level)
