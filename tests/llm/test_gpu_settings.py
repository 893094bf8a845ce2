"""The settings a CUDA GPU gets, checked without one (issue 26, "GPU-ready by construction"): vLLM's
EngineArgs on CUDA have CUDA graphs on, bfloat16, the GPU memory share the caller passes (the
trainer's `rollout.vllm_gpu_memory`, so the learner fits beside vLLM) and sleep mode when asked;
on the CPU the same call keeps eager mode and leaves the GPU-only settings alone. The registry
hands a command's `EngineOptions` to the engine it starts."""

from __future__ import annotations

import pytest

from arena.llm.engines import EngineOptions
from arena.llm.engines import registry
from arena.llm.model import DTYPE_ENV, compute_dtype
from arena.policy import PolicySpecError


def test_weights_compute_in_bfloat16_on_cuda_and_float32_on_the_cpu(monkeypatch):
    monkeypatch.delenv(DTYPE_ENV, raising=False)
    assert compute_dtype("cuda") == compute_dtype("cuda:1") == "bfloat16"
    assert compute_dtype("cpu") == "float32"
    monkeypatch.setenv(DTYPE_ENV, "bfloat16")
    assert compute_dtype("cpu") == "bfloat16"
    monkeypatch.setenv(DTYPE_ENV, "int4")
    with pytest.raises(PolicySpecError, match=DTYPE_ENV):
        compute_dtype("cpu")


@pytest.mark.slow  # importing vLLM takes ~8 s on 2 cores
def test_vllm_on_cuda_runs_cuda_graphs_in_its_memory_share_with_sleep_mode():
    from arena.llm.engines.vllm import engine_args, vllm_missing_reason

    if vllm_missing_reason():
        pytest.skip(vllm_missing_reason())
    from vllm import EngineArgs

    common = {"max_model_len": 2048, "enable_lora": True, "gpu_memory_share": 0.35, "sleep_mode": True}
    gpu = engine_args("model", dtype=compute_dtype("cuda"), cuda=True, **common)
    assert gpu.enforce_eager is False  # CUDA graphs on
    assert gpu.dtype == "bfloat16"
    assert gpu.gpu_memory_utilization == 0.35 and gpu.enable_sleep_mode is True
    assert gpu.enable_prefix_caching is True and gpu.enable_lora is True
    alone = engine_args("model", dtype="bfloat16", cuda=True, max_model_len=2048, enable_lora=False)
    assert alone.gpu_memory_utilization == EngineArgs(model="model").gpu_memory_utilization  # serve-model alone: vLLM's own default
    assert alone.enable_sleep_mode is False
    cpu = engine_args("model", dtype=compute_dtype("cpu"), cuda=False, **common)
    assert cpu.enforce_eager is True and cpu.dtype == "float32"
    assert cpu.enable_sleep_mode is False and cpu.gpu_memory_utilization == EngineArgs(model="model").gpu_memory_utilization


def test_the_registry_hands_the_commands_gpu_options_to_the_vllm_engine_it_starts(monkeypatch):
    started = {}

    def fake_start(base, adapters=None, **options):
        started.update(base=base, adapters=adapters, **options)
        return object()

    monkeypatch.setattr("arena.llm.engines.vllm.start_vllm_engine", fake_start)
    registry._create("vllm", "some-base", ["adapter"], EngineOptions(gpu_memory_share=0.3, sleep_mode=True))
    assert started == {"base": "some-base", "adapters": ["adapter"], "gpu_memory_share": 0.3, "sleep_mode": True}
