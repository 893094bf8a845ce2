"""One registry of local-model engines per process, keyed by (kind, base), and the rule that picks
a policy's engine.

Which engine: a spec's `engine=vllm|hf|auto`; without it $ARENA_LOCAL_ENGINE; else the
`EnginePreference` the running command hands down with the policies it builds (`arena play`
prefers hf: measured to reach the first move sooner; `arena train` prefers its rollout engine;
`arena eval suite` pins the suite's engine); else `auto`. `auto` tries vLLM and falls back to the
transformers ("hf") engine with one line on stderr saying why; `vllm` fails with that reason
instead. A preference is a value passed down, never process state, so two commands in one
process (a trainer and the leagues it evaluates with) cannot change each other's choice.

Every engine a process opens is registered here, and `shutdown_engines` (run at exit) stops them
all: vLLM's threads and anything it started (vllm.py), the hf engine's model thread.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from arena.llm.engines.contract import ENGINE_CHOICES, Engine, EngineUnavailable
from arena.llm.model import LOCAL_ALIASES
from arena.policy import PolicySpecError

ENV_DEFAULT = "ARENA_LOCAL_ENGINE"
_NOTICED: set[str] = set()  # lines already printed in this process


@dataclass(frozen=True)
class EnginePreference:
    """The engine a command wants for local policies whose spec names none, and why (said once
    when it decides)."""

    kind: str = "auto"
    why: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ENGINE_CHOICES:
            raise PolicySpecError(f"engine preference {self.kind!r}: must be one of {', '.join(ENGINE_CHOICES)}")


@dataclass(frozen=True)
class EngineOptions:
    """Settings that apply when a call creates an engine (an engine already running keeps its own).

    hf: `device` (default cuda where available, else cpu), `max_batch`, `max_wait_s`.
    vLLM on CUDA: `gpu_memory_share` (the fraction of GPU memory vLLM takes; the learner needs the
    rest when it shares the GPU) and `sleep_mode` (vLLM may release its GPU memory while the
    learner updates)."""

    device: str | None = None
    max_batch: int = 32
    max_wait_s: float = 0.05
    gpu_memory_share: float | None = None
    sleep_mode: bool = False


def engine_kind(spec_engine: str | None, preference: EnginePreference | None = None) -> str:
    """The engine choice for a spec: its own `engine=`, else $ARENA_LOCAL_ENGINE, else the
    command's preference (said once), else auto."""
    if spec_engine:
        kind = spec_engine.strip().lower()
        if kind not in ENGINE_CHOICES:
            raise PolicySpecError(f"engine={spec_engine!r}: must be one of {', '.join(ENGINE_CHOICES)}")
        return kind
    kind = os.environ.get(ENV_DEFAULT, "").strip().lower()
    if kind:
        if kind not in ENGINE_CHOICES:
            raise PolicySpecError(f"${ENV_DEFAULT}={kind!r}: must be one of {', '.join(ENGINE_CHOICES)}")
        return kind
    if preference is not None and preference.kind != "auto":
        other = "hf" if preference.kind == "vllm" else "vllm"
        notice(f"local models run on the {preference.kind} engine: {preference.why} (engine={other} in a spec picks the other)")
        return preference.kind
    return "auto"


def notice(line: str) -> None:
    """Print `line` on stderr once per process."""
    if line not in _NOTICED:
        _NOTICED.add(line)
        print(line, file=sys.stderr)


def base_key(base: str) -> str:
    """How a base model is addressed: `local` for the shipped model, a resolved folder, or the hub id."""
    name = base.strip()
    if name.lower() in LOCAL_ALIASES:
        return "local"
    path = Path(name).expanduser()
    return str(path.resolve()) if path.exists() else name


_ENGINES: dict[tuple[str, str], Engine] = {}
_FAILED: dict[tuple[str, str], str] = {}  # (kind, base) -> why it did not start (tried once per process)
_LOCK = threading.Lock()


def open_engine(base: str, kind: str = "auto", adapters: list[str] | None = None, options: EngineOptions | None = None) -> Engine:
    """The process's engine of `kind` for `base`, started on first use, with `adapters` (peft LoRA
    folders) loaded. `auto` is vLLM where it starts, else hf with one line saying why; `vllm`
    raises EngineUnavailable with the reason instead."""
    if kind not in ENGINE_CHOICES:
        raise PolicySpecError(f"engine={kind!r}: must be one of {', '.join(ENGINE_CHOICES)}")
    options = options or EngineOptions()
    if kind in ("auto", "vllm"):
        try:
            return _open("vllm", base, adapters, options)
        except EngineUnavailable as exc:
            if kind == "vllm":
                raise EngineUnavailable(f"engine=vllm for {base!r}: {exc}") from None
            notice(f"local model {base!r} runs on the hf engine: {exc}")
    return _open("hf", base, adapters, options)


def scoring_engine(engine: Engine, adapters: list[str] | None = None) -> Engine:
    """The engine that scores legal moves for `engine`'s policies: itself where it can, else the
    hf engine of the same base (vLLM's CPU build cannot score prompts with LoRA enabled: vllm.py)."""
    if engine.can_score:
        return engine
    return _open("hf", engine.base, adapters, EngineOptions())


def shutdown_engines() -> None:
    """Stop every engine of this process (at exit; safe to call by hand, and more than once)."""
    with _LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        try:
            engine.shutdown()
        except Exception:  # noqa: BLE001 - exiting: one engine's failure must not keep the others alive
            pass


def _open(kind: str, base: str, adapters: list[str] | None, options: EngineOptions) -> Engine:
    key = (kind, base_key(base))
    with _LOCK:
        if key in _FAILED:
            raise EngineUnavailable(_FAILED[key])
        engine = _ENGINES.get(key)
        if engine is None:
            try:
                engine = _ENGINES[key] = _create(kind, base, adapters, options)
            except EngineUnavailable as exc:
                _FAILED[key] = str(exc)
                raise
            _shut_down_at_exit()
    for path in adapters or []:
        engine.load_adapter(path)
    return engine


def _create(kind: str, base: str, adapters: list[str] | None, options: EngineOptions) -> Engine:
    if kind == "hf":
        from arena.llm.engines.hf import HFEngine

        return HFEngine(base, max_batch=options.max_batch, max_wait_s=options.max_wait_s, device=options.device)
    from arena.llm.engines.vllm import start_vllm_engine

    return start_vllm_engine(base, adapters, gpu_memory_share=options.gpu_memory_share, sleep_mode=options.sleep_mode)


_EXIT_HOOK: list[bool] = []


def _shut_down_at_exit() -> None:
    """Registered once, after the first engine started (so after multiprocessing's own exit hook,
    which joins children: atexit runs hooks last-in first-out)."""
    if not _EXIT_HOOK:
        _EXIT_HOOK.append(True)
        atexit.register(shutdown_engines)
