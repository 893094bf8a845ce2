"""Library output a user cannot act on, kept off the terminal; `--verbose` brings it back.

Starting vLLM on a CPU printed, between our own progress output: "Triton is installed, but
doesn't include CPU backend" (logged while vLLM is imported, before its logging is configured, so
Python's last-resort handler prints it), FutureWarnings from vLLM's kernel dispatcher scanning
torch.distributed, a NUMA binding warning from torch's C++ logging, a shard-loading bar, and
stats lines every 10 s at INFO. Loading the shipped GGUF printed transformers' own conversion bar
beside ours. None of them tells the user anything to do. Errors still show.

`arena --verbose` (or ARENA_VERBOSE=1) turns all of it back on; VLLM_LOGGING_LEVEL, when set by
the user, always wins for vLLM's own logger.
"""

from __future__ import annotations

import logging
import os
import warnings

VERBOSE_ENV = "ARENA_VERBOSE"


def verbose() -> bool:
    """Whether the user asked for library output (`arena --verbose`, ARENA_VERBOSE=1)."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in ("1", "true", "yes")


def set_verbose(on: bool) -> None:
    """What `arena --verbose` does: recorded in the environment so child processes follow it."""
    if on:
        os.environ[VERBOSE_ENV] = "1"
        os.environ.setdefault("VLLM_LOGGING_LEVEL", "INFO")
    else:
        os.environ.pop(VERBOSE_ENV, None)


def quiet_torch_logs() -> None:
    """torch's C++ warnings (vLLM's NUMA binding note) at error level. torch reads the setting when
    it loads, so this runs before torch is imported (the CLI's entry point)."""
    if not verbose():
        os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")


def quiet_vllm() -> None:
    """Before vLLM is imported: its loggers at VLLM_LOGGING_LEVEL (ERROR unless the user set it)
    from the first line it logs, and its FutureWarnings off."""
    if verbose():
        return
    level = os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR").upper()
    logging.getLogger("vllm").setLevel(getattr(logging, level, logging.ERROR))
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"vllm(\.|$)")


def quiet_progress_bars() -> None:
    """transformers' and huggingface_hub's own tqdm bars (weight loading, GGUF conversion):
    ours already say what is happening."""
    if verbose():
        return
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
