import random
from collections import Counter

import pytest

from league.sampling import pfsp_weight, sample_opponents


def test_pfsp_hard_prefers_opponents_the_learner_loses_to():
    rates = {"weak": 0.9, "strong": 0.2}
    picks = Counter(sample_opponents(["weak", "strong"], rates, "pfsp", random.Random(0), k=4000))
    expected = pfsp_weight(0.2) / (pfsp_weight(0.2) + pfsp_weight(0.9))
    assert abs(picks["strong"] / 4000 - expected) < 0.03


def test_pfsp_var_prefers_even_opponents_and_new_ones_get_tried():
    rates = {"even": 0.5, "crushed": 0.99}
    picks = Counter(sample_opponents(["even", "crushed", "new"], rates, "pfsp", random.Random(1), k=3000, weighting="var"))
    assert picks["even"] > 10 * picks["crushed"] and picks["new"] > 10 * picks["crushed"]


def test_other_modes_and_errors():
    rng = random.Random(2)
    assert sample_opponents(["a", "b"], {}, "self", rng, k=2) == ["current", "current"]
    assert sample_opponents(["a", "b"], {}, "latest", rng) == ["b"]
    assert set(sample_opponents(["a", "b"], {}, "uniform", rng, k=200)) == {"a", "b"}
    assert sample_opponents(["a"], {"a": 1.0}, "pfsp", rng) == ["a"]  # all weights zero -> uniform
    with pytest.raises(ValueError, match="unknown opponent sampling mode"):
        sample_opponents(["a"], {}, "league", rng)
    with pytest.raises(ValueError, match="unknown PFSP weighting"):
        pfsp_weight(0.5, "soft")
