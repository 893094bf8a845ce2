import random
from collections import Counter

import pytest

from trainer.opponent_sampling import pfsp_weight, sample_opponents


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


def test_bad_inputs_name_the_problem():
    rng = random.Random(3)
    with pytest.raises(ValueError, match="k must be at least 1"):
        sample_opponents(["a"], {}, "uniform", rng, k=0)
    with pytest.raises(ValueError, match="win rate against 'a' must be in"):
        sample_opponents(["a"], {"a": 1.5}, "pfsp", rng)
    with pytest.raises(ValueError, match="exponent"):
        pfsp_weight(0.5, "hard", p=-1)
    # higher p sharpens the focus on the hardest opponent
    assert pfsp_weight(0.3, p=4) / pfsp_weight(0.7, p=4) > pfsp_weight(0.3, p=1) / pfsp_weight(0.7, p=1)
