"""Checkpoints under runs/NAME/step-K: the adapter (a peft folder `hf:BASE+runs/NAME/step-K`
loads), with `algorithm.average_from` the average of the iterates (step-K/average, a peft folder
too), the optimizer, every RNG, the step, the advantage baselines, the opponent pool and the
config. Written to `step-K.partial` and renamed into place once complete, so a run killed while
saving resumes from the previous checkpoint instead of a half-written one.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

STATE_FILE = "trainer_state.pt"
AVERAGE_DIR = "average"  # step-K/average: the average of the iterates so far (`algorithm.average_from`)
CONFIG_FILE = "config.yaml"
_STEP_DIR = re.compile(r"^step-(\d+)$")


def step_dir(run_dir: Path, step: int) -> Path:
    return run_dir / f"step-{step}"


def list_checkpoints(run_dir: Path) -> list[tuple[int, Path]]:
    """Complete checkpoints, oldest first."""
    if not run_dir.is_dir():
        return []
    found = []
    for child in run_dir.iterdir():
        match = _STEP_DIR.match(child.name)
        if match and (child / STATE_FILE).is_file():
            found.append((int(match.group(1)), child))
    return sorted(found)


def rng_state(rng: random.Random) -> dict[str, Any]:
    state: dict[str, Any] = {"python": rng.getstate(), "global_python": random.getstate(), "numpy": np.random.get_state(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(rng: random.Random, state: dict[str, Any]) -> None:
    rng.setstate(state["python"])
    random.setstate(state["global_python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def save_checkpoint(run_dir: Path, step: int, learner: Any, state: dict[str, Any], config: dict[str, Any]) -> Path:
    final = step_dir(run_dir, step)
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    learner.save_adapter(partial)
    if learner.average is not None:  # the average of iterates, a peft folder of its own
        learner.save_adapter(partial / AVERAGE_DIR, learner.average)
        state = {**state, "averaged_iterates": learner.averaged_iterates}
    torch.save({**state, "step": step, "optimizer": learner.optimizer.state_dict()}, partial / STATE_FILE)
    (partial / CONFIG_FILE).write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    return final


def load_state(folder: Path) -> dict[str, Any]:
    # Our own file (optimizer tensors, numpy RNG arrays): not loadable with weights_only.
    return torch.load(folder / STATE_FILE, map_location="cpu", weights_only=False)
