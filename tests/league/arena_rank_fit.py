"""Run by tests/league/test_arena_rank_agreement.py inside arena-rank's own venv (its pins, numpy
2.3.3 and jax 0.8.1, cannot live in the project venv): fit LMArena's Bradley-Terry to a battles
JSONL written by `arena export --kind battles` and print its ratings and intervals as JSON.

usage: python arena_rank_fit.py PLAIN.jsonl WEIGHTED.jsonl
PLAIN goes through `PairDataset.from_pandas` (every row counts once: two-player matches of one
game); WEIGHTED is built row by row with each row's `weight` column (N-player matches, pooled
games). Both are fitted in one process, since importing and compiling jax is the slow part.
Intervals: the sandwich, arena-rank's default (its bootstrap forks a jax process per worker and
did not finish in 4 minutes on a 2-core machine)."""

import json
import sys

import jax.numpy as jnp
import pandas as pd
from arena_rank.models.bradley_terry import BradleyTerry
from arena_rank.utils.data_utils import PairDataset, default_outcome_map, get_matchups_and_competitors, get_outcomes


def fit(path: str, weighted: bool) -> dict:
    df = pd.read_json(path, lines=True)
    if weighted:
        pairs, competitors = get_matchups_and_competitors(df)
        weights = jnp.asarray(df["weight"].to_numpy(), dtype=jnp.float64)
        dataset = PairDataset(competitors, pairs, get_outcomes(df, "winner", default_outcome_map), jnp.ones_like(weights), weights, weights)
    else:
        dataset = PairDataset.from_pandas(df)
    model = BradleyTerry(n_competitors=len(dataset.competitors))
    result = model.compute_ratings_and_cis(dataset, significance_level=0.05, ci_method="sandwich")
    return {key: [float(x) for x in result[key]] if key != "competitors" else list(result[key]) for key in ("competitors", "ratings", "rating_lower", "rating_upper")}


def main() -> None:
    print(json.dumps({"plain": fit(sys.argv[1], False), "weighted": fit(sys.argv[2], True)}))


if __name__ == "__main__":
    main()
