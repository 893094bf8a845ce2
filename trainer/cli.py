"""`arena train CONFIG.yaml [--no-wandb] [--resume]`: self-play GRPO of a LoRA adapter; and the
`atropos` kind of `arena export` (scored groups need trainer's rewards, so the kind is registered
here, above league, into league's export command).

A config mistake prints one line naming the file and key and exits 2; Ctrl-C stops after saving
nothing new (the last checkpoint stays; `--resume` continues from it) and exits 130.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arena.redaction import redact
from arena.user_errors import fail
from league.cli.export import register_export_kind

err = Console(stderr=True, highlight=False)
console = Console(highlight=False)

EXAMPLE = "arena train examples/train-tictactoe-cpu.yaml --no-wandb"
SHOWN = ("reward/mean", "games/win", "invalid_rate", "reply_tokens", "train/loss", "train/kl", "train/clip_fraction")


def export_atropos(store: Any, out: Path, league_id: int | None, game: str | None, push: str | None) -> str:
    """`arena export --kind atropos [--push URL]`: the stored turns with exact token ids as Atropos
    scored groups, written to `out` and optionally posted to a hub; returns the line to print."""
    from league.export import write_jsonl
    from trainer.atropos import PushError, push_groups, scored_groups, shown_url

    groups = list(scored_groups(store.iter_records(league_id, game)))
    if not groups:
        raise fail("no stored turn carries exact token ids (TurnRecord.meta prompt_ids/completion_ids, recorded by "
                   "`arena train`'s learner policy); API models and bots have none to export")
    write_jsonl(out, groups)
    samples = sum(len(g["tokens"]) for g in groups)
    if push:
        try:
            push_groups(push, groups)
        except PushError as exc:
            raise fail(f"--push: {exc}")
    return f"wrote {len(groups)} atropos groups ({samples} samples) to {out}" + (f" and pushed them to {redact(shown_url(push))}" if push else "")


def register(app: typer.Typer) -> None:
    register_export_kind("atropos", export_atropos, pushes=True)

    @app.command("train", help=f"Self-play GRPO training of a LoRA adapter.\n\nExample: {EXAMPLE}")
    def train_command(
        config: Path = typer.Argument(..., help="Training YAML (see examples/train-tictactoe-cpu.yaml)."),
        no_wandb: bool = typer.Option(False, "--no-wandb", help="Do not log to Weights & Biases (offline unless WANDB_API_KEY is set)."),
        resume: bool = typer.Option(False, "--resume", help="Continue runs/NAME from its last checkpoint."),
    ) -> None:
        from trainer.config import TrainConfigError, load_config

        try:
            settings = load_config(config)
        except TrainConfigError as exc:
            raise fail(str(exc))
        try:
            asyncio.run(_train(settings, resume=resume, use_wandb=False if no_wandb else None))
        except KeyboardInterrupt:
            err.print(f"interrupted; continue with: arena train {config} --resume", markup=False)
            raise typer.Exit(code=130)
        except ValueError as exc:  # TrainError, ModelNotAvailable, bad LoRA targets: one line
            raise fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


async def _train(settings: Any, *, resume: bool, use_wandb: bool | None) -> None:
    from trainer.run import Trainer

    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("{task.fields[info]}"),
        console=err,
    )
    steps_task = progress.add_task("steps", total=settings.steps, info="")
    games_task = progress.add_task("games", total=1, info="", visible=False)

    def on_event(kind: str, payload: Any) -> None:
        # Event texts quote paths and exceptions: redacted, and escaped so brackets are not markup.
        if kind == "status":
            progress.console.print(f"[dim]{escape(redact(payload))}[/dim]")
        elif kind == "warning":
            progress.console.print(f"[yellow]warning:[/yellow] {escape(redact(payload))}", soft_wrap=True)
        elif kind == "rollout_start":
            progress.update(games_task, total=payload, completed=0, visible=True, info="playing")
        elif kind == "game_done":
            progress.advance(games_task)
        elif kind == "update_start":
            progress.update(games_task, info=f"optimising on {payload} turns")
        elif kind == "checkpoint":
            progress.console.print(f"saved {escape(str(payload))}")
        elif kind == "step_done":
            m = payload.metrics
            info = "  ".join(f"{k.split('/')[-1]}={m[k]:.3g}" for k in SHOWN if isinstance(m.get(k), (int, float)))
            progress.update(steps_task, completed=payload.step, info=info)

    trainer = Trainer(settings, resume=resume, use_wandb=use_wandb, on_event=on_event)
    with progress:
        trainer.setup()
        progress.update(steps_task, completed=trainer.step)
        try:
            await trainer.train()
        finally:
            trainer.close()
    console.print(f"done: {settings.steps} steps; checkpoints in {settings.run_dir}")
