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


def test_a_bad_schedule_is_refused_in_one_line():
    with pytest.raises(ValueError, match="lr_schedule"):
        AlgorithmSettings(lr_schedule="linear")
