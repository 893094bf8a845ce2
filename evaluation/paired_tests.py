"""Statistics of paired differences: what `arena ablate` reports for each variant (docs/ablate.md).

A pair is one chance seed played twice, seats swapped; its difference d is the variant's points
minus the other policy's, per game, averaged over the two games (win 1, draw 1/2, loss 0), so
d is in {-1, -1/2, 0, 1/2, 1}. For n pairs:
- the mean difference with a Student t 95% interval (mean +- t(0.975, n-1) sd / sqrt(n));
- a two-sided sign-flip permutation test: under "no difference" each pair's d is as likely to
  have come out with its sign flipped (the variant and the other policy exchanged), so the
  p-value is the share of all 2^n sign assignments whose |sum| is at least the observed |sum|.
  It is computed exactly, with no sampling: the differences lie on a lattice (multiples of 1/2),
  and the distribution of the flipped sum is a convolution of binomials, one per magnitude;
- Holm's step-down correction across the comparisons of one study (Holm 1979).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.stats import binom, t as student_t

LATTICE = 0.5  # pair differences of win/draw/loss games are multiples of a half point


@dataclass(frozen=True)
class PairedSummary:
    n: int  # pairs
    mean: float | None
    sd: float | None  # sample standard deviation of the pair differences (n - 1 in the denominator)
    ci_lo: float | None  # Student t 95% interval of the mean
    ci_hi: float | None
    p_value: float  # two-sided, exact sign-flip permutation test
    decisive: int  # pairs with a non-zero difference (the only ones a sign flip changes)

    @property
    def smallest_p(self) -> float:
        """The smallest p-value `decisive` pairs can give (all of them one way): 2 / 2^decisive."""
        return min(1.0, 2.0 ** (1 - self.decisive)) if self.decisive else 1.0


def sign_flip_p_value(differences: Sequence[float], unit: float = LATTICE) -> float:
    """Two-sided p-value of the paired sign-flip permutation test, exact: the share of the 2^n
    sign assignments s with |sum s_i d_i| >= |sum d_i|. Every d must be a multiple of `unit`."""
    values = np.asarray(differences, dtype=float)
    steps = np.rint(values / unit)
    if not np.allclose(steps * unit, values, rtol=0.0, atol=1e-9 * unit):
        raise ValueError(f"pair differences must be multiples of {unit:g}")
    steps = steps.astype(np.int64)
    observed = abs(int(steps.sum()))
    magnitudes = np.abs(steps[steps != 0])
    if magnitudes.size == 0:
        return 1.0
    # The flipped sum is sum over magnitudes k of k * (2 J_k - c_k), J_k ~ Binomial(c_k, 1/2) for
    # the c_k pairs of magnitude k; its distribution, on -total..total, is their convolution.
    total = int(magnitudes.sum())
    distribution = np.zeros(2 * total + 1)
    distribution[total] = 1.0
    for k, count in zip(*np.unique(magnitudes, return_counts=True)):
        k, count = int(k), int(count)
        spread = np.zeros(2 * k * count + 1)
        spread[:: 2 * k] = binom.pmf(np.arange(count + 1), count, 0.5)
        distribution = np.convolve(distribution, spread)[k * count : k * count + 2 * total + 1]
    sums = np.arange(-total, total + 1)
    return float(min(1.0, distribution[np.abs(sums) >= observed].sum()))


def t_interval(differences: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """Student t interval of the mean; None below two pairs (no spread to estimate)."""
    values = np.asarray(differences, dtype=float)
    if values.size < 2:
        return None
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    half = float(student_t.ppf(0.5 + level / 2, values.size - 1)) * sd / math.sqrt(values.size)
    return mean - half, mean + half


def summarize(differences: Sequence[float]) -> PairedSummary:
    values = [float(d) for d in differences]
    n = len(values)
    interval = t_interval(values)
    return PairedSummary(
        n=n,
        mean=float(np.mean(values)) if n else None,
        sd=float(np.std(values, ddof=1)) if n >= 2 else None,
        ci_lo=None if interval is None else max(-1.0, interval[0]),  # a difference is within [-1, 1]
        ci_hi=None if interval is None else min(1.0, interval[1]),
        p_value=sign_flip_p_value(values),
        decisive=sum(1 for d in values if d != 0),
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: sorted ascending, the i-th smallest
    (0-based) becomes max over j <= i of min(1, (m - j) p_(j)). Rejecting where adjusted p < alpha
    keeps the chance of any false rejection among the m at most alpha."""
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
