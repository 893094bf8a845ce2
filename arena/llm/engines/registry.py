"""Which engine runs a local model: vLLM where it is installed and starts, else transformers.

`engine=vllm|hf|auto` in a `local` / `hf:` spec picks it; without it $ARENA_LOCAL_ENGINE, else
what the command preferred (`arena play` prefers hf: measured to reach the first move sooner;
`arena train` prefers its rollout engine), else `auto`. `auto` tries vLLM and falls back to the transformers ("hf")
engine with one line on stderr saying why; `vllm` fails with that reason instead. The hf engine
stays the learner's model in training and the fallback on machines vLLM cannot run on.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from arena.policy import PolicySpecError

ENGINE_KINDS = ("auto", "vllm", "hf")
ENV_DEFAULT = "ARENA_LOCAL_ENGINE"
_NOTICED: set[str] = set()  # reasons already printed in this process
_preferred: tuple[str, str] | None = None  # (kind, why) chosen by the running command


def prefer_engine(kind: str | None, why: str = "") -> None:
    """The running command's default for specs without engine= (the environment still wins);
    None drops it."""
    global _preferred
    _preferred = (kind, why) if kind is not None else None


def preferred_engine() -> tuple[str, str] | None:
    """(kind, why) set by `prefer_engine`, or None."""
    return _preferred


def default_engine_kind() -> str:
    kind = os.environ.get(ENV_DEFAULT, "").strip().lower()
    if kind and kind not in ENGINE_KINDS:
        raise PolicySpecError(f"${ENV_DEFAULT}={kind!r}: must be one of {', '.join(ENGINE_KINDS)}")
    if kind:
        return kind
    if _preferred is not None:
        kind, why = _preferred
        other = "hf" if kind == "vllm" else "vllm"
        _notice(f"local models run on the {kind} engine: {why} (engine={other} in a spec picks the other)")
        return kind
    return "auto"


def _notice(line: str) -> None:
    if line not in _NOTICED:
        _NOTICED.add(line)
        print(line, file=sys.stderr)


def local_engine(base: str, adapters: list[str] | None, kind: str, **hf_options: Any) -> tuple[Any, str]:
    """(engine, "vllm" | "hf") for `base` with `adapters` loaded; `hf_options` (max_batch, ...)
    apply when this call creates the hf engine."""
    from arena.llm.engines.hf import get_engine

    if kind not in ENGINE_KINDS:
        raise PolicySpecError(f"engine={kind!r}: must be one of {', '.join(ENGINE_KINDS)}")
    if kind in ("auto", "vllm"):
        from arena.llm.engines.vllm import VLLMUnavailable, get_vllm_engine

        try:
            return get_vllm_engine(base, adapters), "vllm"
        except VLLMUnavailable as exc:
            if kind == "vllm":
                raise PolicySpecError(f"engine=vllm for {base!r}: {exc}") from None
            _notice(f"local model {base!r} runs on the hf engine: {exc}")
    return get_engine(base, adapters, **hf_options), "hf"
