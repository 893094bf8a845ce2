"""`arena serve-model`: one local model (plus LoRA adapters) behind an OpenAI-compatible endpoint."""

from __future__ import annotations

from typing import Optional

import typer


def register(app: typer.Typer) -> None:
    app.command("serve-model")(serve_model_command)


def serve_model_command(
    model: str = typer.Argument("local", help="`local` (the shipped SmolLM2), a Hugging Face id or a model folder."),
    host: str = typer.Option("127.0.0.1", help="Interface to listen on (loopback by default: there is no auth)."),
    port: int = typer.Option(8000, help="TCP port."),
    adapter: Optional[list[str]] = typer.Option(None, "--adapter", help="A peft LoRA folder to serve too (repeatable); select it by its path in `model`."),
    faults: str = typer.Option("", help='Fault injection for tests, e.g. "429=0.1,500=0.1,timeout=0.05,garbage=0.1".'),
    fault_seed: int = typer.Option(0, help="Seed of the fault draws (same seed, same sequence)."),
    fault_hang_s: float = typer.Option(120.0, help="How long an injected timeout hangs."),
    max_batch: int = typer.Option(32, min=1, help="Most requests in one generate call."),
    max_wait_ms: float = typer.Option(50.0, min=0, help="Longest wait for stragglers before a batch starts."),
    log_level: str = typer.Option("warning", help="uvicorn log level."),
) -> None:
    """Serve a local model over /v1/chat/completions and /v1/models (OpenAI-compatible).

    Example: arena serve-model local --port 8000 --adapter runs/ttt/checkpoint-200
    then point any OpenAI client at http://127.0.0.1:8000/v1 with model "local" (any api key).
    """
    from rich.console import Console

    from arena.user_errors import fail
    from arena.llm.model import ModelNotAvailable
    from arena.llm.server import FaultConfig

    console = Console(stderr=True, highlight=False)
    try:
        fault_config = FaultConfig.parse(faults, seed=fault_seed, hang_s=fault_hang_s) if faults else None
    except ValueError as exc:
        raise fail(f"--faults: {exc}")
    try:
        import uvicorn

        from arena.llm.engine import get_engine
        from arena.llm.server import create_app

        with console.status(f"loading {model} ..."):
            engine = get_engine(model, adapter or [], max_batch=max_batch, max_wait_s=max_wait_ms / 1000)
            app = create_app(engine, served_name=model, adapters=adapter or [], faults=fault_config)
    except ModelNotAvailable as exc:
        raise fail(str(exc))
    served = ", ".join([model, *(adapter or [])])
    console.print(f"serving {served} on http://{host}:{port}/v1 (max batch {max_batch})" + (f", faults {faults}" if faults else ""))
    uvicorn.run(app, host=host, port=port, log_level=log_level)
