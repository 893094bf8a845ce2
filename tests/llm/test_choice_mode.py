"""Choice mode: a legal move drawn by the model's own probability of it as the whole reply."""

from __future__ import annotations

import asyncio
import math

import pytest

from arena.llm.engines import open_engine
from arena.llm.engines.scoring import choice_probabilities
from evaluation.exploitability import build_tree, policy_strategy
from arena.match import play_match
from arena.policy import PolicySpecError, make_policy
from games.registry import make_game

MESSAGES = [
    {"role": "system", "content": "You play Kuhn poker. Answer with one move."},
    {"role": "user", "content": "Your card: K. Nobody has bet. Legal moves: check, bet"},
]
OPTIONS = ["check", "bet"]


def test_choice_probabilities_follow_the_temperature() -> None:
    logps = [math.log(0.2), math.log(0.6)]  # the model gives 0.8 of its mass to the two moves
    assert choice_probabilities(logps, 1.0) == pytest.approx([0.25, 0.75])
    assert choice_probabilities(logps, 0.5) == pytest.approx([0.1, 0.9])  # p^2, renormalised
    assert choice_probabilities(logps, 0.0) == [0.0, 1.0]


def test_remote_policies_refuse_choice_mode() -> None:
    with pytest.raises(PolicySpecError, match="only local models"):
        make_policy("openai:gpt-4o-mini,base_url=http://127.0.0.1:9,mode=choice")


@pytest.mark.slow
async def test_engine_draws_by_score_and_reports_every_option() -> None:
    engine = open_engine("local", "hf")
    (greedy, g), (a, ga), (b, gb) = await asyncio.gather(
        engine.choose(MESSAGES, OPTIONS),
        engine.choose(MESSAGES, OPTIONS, temperature=1.0, seed=11),
        engine.choose(MESSAGES, OPTIONS, temperature=1.0, seed=11),
    )
    assert a == b and ga.completion_ids == gb.completion_ids  # a seeded draw replays
    assert greedy == OPTIONS[max(range(2), key=lambda i: g.option_logprobs[i])]
    for choice, generation in ((greedy, g), (a, ga)):
        picked = OPTIONS.index(choice)
        assert len(generation.completion_logprobs) == len(generation.completion_ids)
        assert sum(generation.completion_logprobs) == pytest.approx(generation.option_logprobs[picked], abs=1e-5)
    # Many draws at a high temperature land on both moves about as the probabilities say.
    draws = await asyncio.gather(*(engine.choose(MESSAGES, OPTIONS, temperature=2.0, seed=s) for s in range(120)))
    share = sum(choice == "bet" for choice, _ in draws) / len(draws)
    expected = choice_probabilities(g.option_logprobs, 2.0)[1]
    assert abs(share - expected) < 4 * math.sqrt(expected * (1 - expected) / len(draws)) + 0.01


@pytest.mark.slow
async def test_policy_records_move_probabilities_and_states_them_exactly() -> None:
    policy = make_policy("local,mode=choice,obs=state,seed=5,temperature=1.5")
    record = await play_match(make_game("kuhn_poker", 2, hands=1), [policy, make_policy("random")], seed=3)
    mine = [t for t in record.turns if t.player == 0]
    assert mine and all(t.valid and t.meta["parse"] == "choice" for t in mine)
    for turn in mine:
        probs = turn.meta["move_probs"]
        assert set(probs) == set(turn.legal_moves) and sum(probs.values()) == pytest.approx(1.0)
        assert turn.meta["choice_temperature"] == 1.5
    tree = build_tree(lambda: make_game("kuhn_poker", 2, hands=1))
    strategy = await policy_strategy(tree, policy)
    # The recorded distribution of the first decision is the one exact evaluation uses.
    first = mine[0]
    assert strategy[(0, first.observation)] == pytest.approx(first.meta["move_probs"], abs=1e-5)
