"""A learner on the shipped model with a small LoRA whose weights are made non-zero, so the
adapter really takes part in the log-probs and gradients a test compares."""

from pathlib import Path

import torch

from trainer.config import AlgorithmSettings, LoraSettings
from trainer.learner import Learner, write_initial_adapter


def learner_with_active_lora(folder: Path, settings: AlgorithmSettings | None = None) -> Learner:
    from arena.llm.engines import open_engine

    write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), folder, seed=3)
    learner = Learner(open_engine("local", "hf"), folder, settings or AlgorithmSettings(), temperature=1.0, max_new_tokens=8)
    torch.manual_seed(0)
    with torch.no_grad():
        for p in learner.params.values():
            p.copy_(torch.randn_like(p) * 0.02)
    return learner
