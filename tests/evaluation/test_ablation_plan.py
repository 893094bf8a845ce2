"""The plan of `arena ablate`: NAME=SPEC parsing, the null variant's own draws, the league it becomes
(both seats of one chance seed per pair, the same seeds for every comparison) and one-line errors
naming the file's key or the flag."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from arena.match import play_match
from arena.policy import PolicySpec, make_policy
from evaluation.ablation_plan import PlanError, load_plan, named_spec, null_spec, parse_plan
from games.registry import make_game

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ablate.yaml"


@pytest.mark.parametrize("text, expected", [
    ("vote3=local,max_new_tokens=8,sampler=vote:3", ("vote3", "local,max_new_tokens=8,sampler=vote:3")),
    ("local,sampler=vote:3", ("local,sampler=vote:3", "local,sampler=vote:3")),  # a bare spec names itself
    ("bot", ("bot", "bot")),
    ("openai:gpt-4o-mini,base_url=http://127.0.0.1:8000/v1?a=b", ("openai:gpt-4o-mini,base_url=http://127.0.0.1:8000/v1?a=b",) * 2),
    (" base = random ", ("base", "random")),
])
def test_named_spec(text, expected):
    assert named_spec(text) == expected


@pytest.mark.parametrize("spec", ["random", "bot", "local,max_new_tokens=8", "hf:some/model,temperature=0.7", "random,seed=3", "openai:gpt-4o,seed=1"])
def test_the_null_of_a_seeded_kind_gets_a_seed_of_its_own(spec):
    null = PolicySpec.parse(null_spec(spec))
    base = PolicySpec.parse(spec)
    assert null.params.pop("seed") != base.params.pop("seed", None)
    assert (null.kind, null.target, null.params) == (base.kind, base.target, base.params), "only the seed differs"
    assert null_spec(spec) == null_spec(spec), "the null's seed is a function of the spec: one row across ablations"


def test_an_api_kind_without_a_seed_keeps_its_spec():
    """Such a provider is sent no seed (arena/llm/remote_policy.py): its draws are independent already."""
    assert null_spec("openai:gpt-4o-mini,temperature=1") == "openai:gpt-4o-mini,temperature=1"


def _games(a, b, seed):
    async def both():
        first = await play_match(make_game("tictactoe", 2), [a, b], seed)
        second = await play_match(make_game("tictactoe", 2), [b, a], seed)
        return [t.action for t in first.turns], [t.action for t in second.turns]
    return asyncio.run(both())


def test_a_same_spec_copy_replays_the_baselines_games_and_the_null_does_not():
    """Why the null has a seed of its own: with the seats swapped on one chance seed, a same-spec
    copy draws exactly what the baseline drew, so both games of every pair are one game."""
    def named(spec, name):
        policy = make_policy(spec)
        policy.name = name
        return policy

    copies = [_games(named("random", "A"), named("random", "B"), seed) for seed in range(8)]
    assert all(first == second for first, second in copies)
    nulls = [_games(named(null_spec("random"), "null"), named("random", "base"), seed) for seed in range(8)]
    assert sum(first != second for first, second in nulls) >= 6


def test_the_league_plays_every_comparison_on_both_seats_of_each_chance_seed():
    plan = parse_plan({"baseline": "base=random", "variants": {"b": "bot", "c": "random,seed=4"}, "games": ["tictactoe", "nim"], "pairs": 5, "all_pairs": True}, "t")
    config = plan.league_config()
    assert config.scheduler == "fixed" and config.name == "ablate base"
    assert [p.name for p in config.policies] == ["base", "base (null)", "b", "c"]
    assert plan.comparisons() == [("b", "base", "variant"), ("c", "base", "variant"), ("b", "c", "pair"), ("base (null)", "base", "null")]
    assert len(config.matches) == 5 * 2 * 4 * 2  # pairs x games x comparisons x seat orders
    by_pair: dict[tuple, list] = {}
    for match in config.matches:
        by_pair.setdefault((match.game, match.seed, frozenset(match.seats)), []).append(tuple(match.seats))
    assert all(len(seats) == 2 and seats[0] == seats[1][::-1] for seats in by_pair.values())
    seeds = Counter((m.game, m.seed) for m in config.matches)
    assert len(seeds) == 5 * 2, "one chance seed per (game, pair), distinct across pairs"
    assert set(seeds.values()) == {4 * 2}, "every comparison plays each chance seed"
    null_opponents = {s for m in config.matches if "base (null)" in m.seats for s in m.seats}
    assert null_opponents == {"base", "base (null)"}, "the null plays only the baseline"


def test_the_example_file_is_a_valid_plan():
    plan = load_plan(EXAMPLE)
    assert plan.variants and plan.null_variant and plan.league_config().matches


@pytest.mark.parametrize("data, flags, message", [
    ({"baseline": "random", "games": "tictactoe", "pairs": 0}, False, "t.yaml: pairs: Input should be greater than or equal to 1"),
    ({"baseline": "random", "games": "tictactoe", "pairs": 0}, True, "arena ablate: --pairs: Input should be greater than or equal to 1"),
    ({"baseline": "random", "variants": ["x=opnai:gpt-4o"], "games": "tictactoe", "pairs": 2}, False, "t.yaml: variants.x: unknown policy 'opnai:gpt-4o'; did you mean openai?"),
    ({"baseline": "random", "variants": ["x=opnai:gpt-4o"], "games": "tictactoe", "pairs": 2}, True, "arena ablate: --variant x: unknown policy 'opnai:gpt-4o'; did you mean openai?"),
    ({"baseline": "random", "games": ["tictactoe", "nosuch"], "pairs": 2}, False, "t.yaml: games[1]: unknown game 'nosuch'"),
    ({"baseline": "random", "games": "sealed_bid_auction", "pairs": 2}, True, "arena ablate: --game sealed_bid_auction: sealed_bid_auction takes 3-6 players, not 2 (an ablation swaps"),
    ({"baseline": "random", "variants": ["copy=random"], "games": "tictactoe", "pairs": 2}, False, "t.yaml: (top level): two policies share the spec 'random'"),
    ({"baseline": "random", "variants": ["random,seed=1", "random,seed=1"], "games": "tictactoe", "pairs": 2}, False, "t.yaml: (top level): policy names must be unique; repeated: random,seed=1"),
    ({"baseline": "random", "null_variant": False, "games": "tictactoe", "pairs": 2}, False, "t.yaml: (top level): nothing to compare"),
    ({"baseline": "random", "games": "tictactoe", "pairs": 2, "sampler": "vote"}, False, "t.yaml: sampler: Extra inputs are not permitted"),
    ({"baseline": "random", "pairs": 2}, True, "arena ablate: --game: Field required"),
    (["random"], False, "t.yaml: (top level): expected a mapping of settings, got list"),
    ({"baseline": "random", "variants": {"x": None}, "games": "tictactoe", "pairs": 2}, False, "t.yaml: variants[0].spec: Input should be a valid string"),
    ({"baseline": "random", "variants": {"x": {"spec": "bot", "seed": 1}}, "games": "tictactoe", "pairs": 2}, False, "t.yaml: variants[0].seed: Extra inputs"),
])
def test_errors_are_one_line_naming_the_key_or_flag(data, flags, message):
    with pytest.raises(PlanError) as caught:
        parse_plan(data, "arena ablate" if flags else "t.yaml", flags=flags)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_missing_file_is_one_line(tmp_path):
    with pytest.raises(PlanError, match=r"nope.yaml: no such file"):
        load_plan(tmp_path / "nope.yaml")
