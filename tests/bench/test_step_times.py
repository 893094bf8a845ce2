"""bench/experiments/step_times.py: its `strategy` workload times bench.strategy's own step."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from bench.strategy import build_config, defaults

ROOT = Path(__file__).resolve().parents[2]


def _step_times():
    spec = importlib.util.spec_from_file_location("step_times", ROOT / "bench" / "experiments" / "step_times.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("game", ["kuhn_poker", "leduc_holdem", "tictactoe"])
def test_the_strategy_workload_is_bench_strategys_config(game, tmp_path):
    config = _step_times().strategy_config(game, tmp_path, 3)
    expected = build_config(defaults(game, runs=tmp_path, steps=3, name=f"step-times-{game}"))
    assert config == expected
    assert config["steps"] == 3 and config["output_dir"] == str(tmp_path)
    assert config["rollout"]["groups_per_step"] * config["rollout"]["group_size"] == {"kuhn_poker": 1024, "leduc_holdem": 256, "tictactoe": 16}[game]
