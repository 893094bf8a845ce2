"""Engines for local models behind one contract.

    contract.py  the `Engine` Protocol and the values that cross it (SamplingParams, Generation)
    registry.py  one engine per (kind, base) per process; which engine a policy gets; shutdown
    hf.py        transformers + peft: batched generate, choice scoring, the learner's model
    vllm.py      vLLM: prefix caching and continuous batching, in this process
    scoring.py   the maths of scoring legal moves, shared by hf.py and the learner

Importing this package is cheap (no torch, no vLLM): engines load when one is opened.
"""

from arena.llm.engines.contract import (
    ENGINE_CHOICES,
    ENGINE_KINDS,
    CannotScore,
    Engine,
    EngineStats,
    EngineUnavailable,
    Generation,
    PromptTooLong,
    SamplingParams,
)
from arena.llm.engines.registry import (
    EngineOptions,
    EnginePreference,
    engine_kind,
    open_engine,
    scoring_engine,
    shutdown_engines,
)

__all__ = [
    "ENGINE_CHOICES", "ENGINE_KINDS", "CannotScore", "Engine", "EngineOptions", "EnginePreference", "EngineStats",
    "EngineUnavailable", "Generation", "PromptTooLong", "SamplingParams", "engine_kind", "open_engine",
    "scoring_engine", "shutdown_engines",
]
