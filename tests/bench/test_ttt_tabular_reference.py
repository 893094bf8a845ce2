"""bench/experiments/ttt_tabular_reference.py: its pass rule is bench.strategy's test at the
expectation, and it ends with the JSON line its docstring names."""

from __future__ import annotations

import json
import sys

from bench.experiments import ttt_tabular_reference
from evaluation.report_card import wilson


def test_a_pass_is_the_wilson_intervals_of_1600_games_apart():
    start = 0.1274  # the uniform mover's exact rate
    assert not ttt_tabular_reference.passes(start, start)
    assert ttt_tabular_reference.passes(start, 0.163)
    assert not ttt_tabular_reference.passes(start, 0.160)
    # the rule itself, at the boundary the bench prints ("a pass needs 0.162")
    assert wilson(0.162 * 1600, 1600)[0] > wilson(start * 1600, 1600)[1] > wilson(0.161 * 1600, 1600)[0]


def test_the_run_ends_with_its_headline_json(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["ttt_tabular_reference", "--groups", "2", "--steps", "2", "--seeds", "2", "--learning-rate", "1.0"])
    ttt_tabular_reference.main()
    last = capsys.readouterr().out.strip().splitlines()[-1]
    figures = json.loads(last)
    assert figures["ttt_tabular_games_per_step"] == 8
    assert 0.0 <= figures["ttt_tabular_pass_share"] <= 1.0
    (budget,) = figures["budgets"]
    assert budget["groups"] == 2 and budget["best_learning_rate"] == 1.0
    assert set(budget["by_learning_rate"]) == {"1.0"}
