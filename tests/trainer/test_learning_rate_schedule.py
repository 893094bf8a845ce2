"""`algorithm.lr_schedule`: constant, or cosine from the configured rate to lr_final_fraction of it
at the last step, a function of the step alone (a resumed run continues it)."""

from __future__ import annotations

import math

import pytest

from trainer.config import AlgorithmSettings
from trainer.schedule import scheduled_learning_rate


def test_constant_is_the_configured_rate_at_every_step():
    settings = AlgorithmSettings(learning_rate=1e-3)
    assert {scheduled_learning_rate(settings, step, 50) for step in range(1, 51)} == {1e-3}


def test_cosine_falls_from_the_rate_to_its_final_fraction():
    settings = AlgorithmSettings(learning_rate=1e-3, lr_schedule="cosine", lr_final_fraction=0.1)
    rates = [scheduled_learning_rate(settings, step, 41) for step in range(1, 42)]
    assert rates[0] == pytest.approx(1e-3, rel=1e-12)
    assert rates[-1] == pytest.approx(1e-4, rel=1e-12)
    assert rates[20] == pytest.approx(0.55e-3, rel=1e-12)  # halfway: the mean of the two ends
    assert all(a > b for a, b in zip(rates, rates[1:]))
    assert scheduled_learning_rate(settings, 60, 41) == pytest.approx(1e-4)  # past the end: stays at the floor
    assert math.isclose(scheduled_learning_rate(settings, 1, 1), 1e-3)


def test_a_warm_up_rises_linearly_then_the_cosine_runs_over_the_remaining_steps():
    settings = AlgorithmSettings(learning_rate=1e-3, lr_schedule="cosine", lr_final_fraction=0.1, lr_warmup_steps=3)
    rates = [scheduled_learning_rate(settings, step, 24) for step in range(1, 25)]
    assert rates[:3] == pytest.approx([0.25e-3, 0.5e-3, 0.75e-3], rel=1e-12)  # never 0: every step updates
    assert rates[3] == pytest.approx(1e-3, rel=1e-12)  # the cosine starts at the full rate after the warm-up
    assert rates[13] == pytest.approx(0.55e-3, rel=1e-12)  # halfway through the cosine (steps 4-24)
    assert rates[-1] == pytest.approx(1e-4, rel=1e-12)
    assert all(a < b for a, b in zip(rates[:4], rates[1:4])) and all(a > b for a, b in zip(rates[3:], rates[4:]))
    constant = AlgorithmSettings(learning_rate=1e-3, lr_warmup_steps=1)
    assert [scheduled_learning_rate(constant, step, 5) for step in (1, 2, 5)] == pytest.approx([0.5e-3, 1e-3, 1e-3], rel=1e-12)


def test_a_bad_schedule_is_refused_in_one_line():
    with pytest.raises(ValueError, match="lr_schedule"):
        AlgorithmSettings(lr_schedule="linear")
    with pytest.raises(ValueError, match="lr_warmup_steps"):
        AlgorithmSettings(lr_warmup_steps=-1)
