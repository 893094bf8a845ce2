"""Metrics: one JSON line per step in runs/NAME/metrics.jsonl, mirrored to Weights & Biases.

wandb runs offline (files under runs/NAME/wandb, `wandb sync` later) unless WANDB_API_KEY is set;
the key is read by wandb itself from the environment and never written by us. `--no-wandb` (or
`logging.wandb: false`) switches it off. A wandb failure never stops training: it is reported once
and the local file keeps everything.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any

from arena.redaction import redact, redact_data


class MetricsLogger:
    def __init__(self, path: Path, *, use_wandb: bool, project: str, run_name: str, config: dict[str, Any], resume: bool):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.wandb_run: Any = None
        self.warning: str | None = None
        if use_wandb:
            try:
                import wandb

                mode = "online" if os.environ.get("WANDB_API_KEY") else "offline"
                self.wandb_run = wandb.init(
                    project=project,
                    name=run_name,
                    id=_wandb_id(run_name, path.parent),
                    dir=str(path.parent),
                    config=redact_data(config),  # policy specs and URLs in it are shown on wandb.ai
                    mode=mode,
                    resume="allow" if resume else None,
                    reinit="finish_previous",
                )
            except Exception as exc:  # noqa: BLE001 - logging must never stop a training run
                self.warning = f"wandb disabled: {type(exc).__name__}: {redact(str(exc).splitlines()[0])[:200] if str(exc) else ''}"

    def log(self, step: int, metrics: dict[str, Any]) -> None:
        row = {"step": step, "time": round(time.time(), 3), **{k: _clean(v) for k, v in metrics.items()}}
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
        if self.wandb_run is not None:
            try:
                self.wandb_run.log({k: v for k, v in row.items() if isinstance(v, (int, float))}, step=step)
            except Exception as exc:  # noqa: BLE001
                self.warning = f"wandb logging failed: {type(exc).__name__}"
                self.wandb_run = None

    def close(self) -> None:
        if self.wandb_run is not None:
            try:
                self.wandb_run.finish()
            except Exception:  # noqa: BLE001
                pass
            self.wandb_run = None


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """Every complete line; a line torn by a kill in the middle of a write is skipped."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def truncate_after(path: Path, step: int) -> None:
    """On resume: drop lines logged after the checkpoint we resume from (they will be redone)."""
    rows = [r for r in read_metrics(path) if int(r.get("step", 0)) <= step]
    if path.is_file():
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _wandb_id(run_name: str, run_dir: Path) -> str:
    import hashlib

    return run_name[:40] + "-" + hashlib.sha1(str(run_dir.resolve()).encode()).hexdigest()[:8]
