"""The statistics of `arena ablate` on constructed data: the exact sign-flip p-value against brute-force
enumeration and against SciPy's permutation test, a known difference found, identical data never
significant, the test's false-positive rate at most alpha, the t interval and Holm's correction."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import permutation_test

from evaluation.paired_tests import holm, sign_flip_p_value, summarize, t_interval

PAIR_VALUES = (-1.0, -0.5, 0.0, 0.5, 1.0)  # every difference a win/draw/loss pair can have


def enumerated_p(differences: list[float]) -> float:
    """The definition, by brute force: the share of all 2^n sign flips whose |sum| reaches the observed |sum|."""
    observed = abs(sum(differences))
    flips = list(itertools.product((1, -1), repeat=len(differences)))
    return sum(abs(sum(s * d for s, d in zip(signs, differences))) >= observed - 1e-12 for signs in flips) / len(flips)


@pytest.mark.parametrize("differences, expected", [
    ([1.0, 1.0, 1.0], 2 / 8),  # all one way: only the two all-same-sign flips reach |3|
    ([1.0] * 6, 2 / 64),
    ([1.0, -1.0], 1.0),
    ([0.5, 1.0], 2 / 4),  # |1.5| is reached only by (+,+) and (-,-)
    ([0.0, 0.0, 1.0], 1.0),  # zeros do not move the sum: one decisive pair, |1| always reached
    ([], 1.0),
])
def test_p_value_by_hand(differences, expected):
    assert sign_flip_p_value(differences) == pytest.approx(expected, abs=1e-12)


def test_p_value_equals_enumeration_of_every_sign_flip():
    rng = np.random.default_rng(7)
    for n in range(1, 11):
        for _ in range(15):
            differences = list(rng.choice(PAIR_VALUES, size=n))
            # Float sums of <= 1024 terms of probabilities: 1e-12 is far above their rounding.
            assert sign_flip_p_value(differences) == pytest.approx(enumerated_p(differences), abs=1e-12), differences


def test_p_value_agrees_with_scipys_exact_permutation_test():
    rng = np.random.default_rng(3)
    for _ in range(5):
        differences = rng.choice(PAIR_VALUES, size=12)
        scipy_p = permutation_test((differences,), lambda x, axis: np.sum(x, axis=axis), permutation_type="samples",
                                   n_resamples=10_000, alternative="two-sided", vectorized=True).pvalue  # 2^12 < 10_000: exact
        assert sign_flip_p_value(differences) == pytest.approx(scipy_p, abs=1e-12)


def test_differences_off_the_half_point_lattice_are_refused():
    with pytest.raises(ValueError, match="multiples of 0.5"):
        sign_flip_p_value([0.3, 0.5])


def test_a_known_difference_is_detected():
    """30 pairs where the variant gains half a point per game, give or take."""
    rng = np.random.default_rng(0)
    differences = np.clip(0.5 + rng.choice([-0.5, 0.0, 0.5], size=30), -1, 1)
    stats = summarize(differences)
    assert stats.p_value < 0.001
    assert 0 < stats.ci_lo < stats.mean < stats.ci_hi


def test_identical_data_is_not_significant():
    stats = summarize([0.0] * 25)
    assert stats.p_value == 1.0 and stats.decisive == 0
    assert stats.mean == 0.0 and (stats.ci_lo, stats.ci_hi) == (0.0, 0.0)


def test_balanced_wins_and_losses_are_not_significant():
    assert summarize([1.0, -1.0] * 10).p_value == 1.0


def test_false_positive_rate_is_at_most_alpha():
    """Under no difference (each pair's sign a coin flip) an exact test rejects at most alpha of the
    time: 1500 simulated studies of 15 pairs; the bound allows 3 binomial standard errors."""
    rng = np.random.default_rng(11)
    studies = 1500
    rejected = sum(sign_flip_p_value(rng.choice(PAIR_VALUES, size=15)) < 0.05 for _ in range(studies))
    assert rejected / studies <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / studies)


def test_t_interval_by_hand():
    lo, hi = t_interval([0.5, 1.0, 0.0])
    half = 4.302652729749462 * 0.5 / math.sqrt(3)  # t(0.975, 2) (tables: 4.3027) x sd / sqrt(n); mean 0.5, sd 0.5
    assert lo == pytest.approx(0.5 - half, abs=1e-12) and hi == pytest.approx(0.5 + half, abs=1e-12)
    assert t_interval([1.0]) is None


def test_interval_stays_within_the_range_of_a_difference():
    stats = summarize([1.0, 1.0, 0.5])
    assert stats.ci_hi == 1.0 and stats.ci_lo < stats.mean


def test_smallest_possible_p():
    assert summarize([1.0, 0.5, 0.0]).smallest_p == 0.5  # two decisive pairs: 2 / 2^2
    assert summarize([0.0]).smallest_p == 1.0


def test_holm_by_hand():
    # sorted: 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04, raised to the running 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06], abs=1e-15)
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []
