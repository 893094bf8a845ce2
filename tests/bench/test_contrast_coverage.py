import random

import pytest

from bench.experiments.contrast_coverage import coverage, draw_step
from bench.head_to_head import GAME_OPTIONS
from evaluation.exploitability import build_tree, uniform_strategy
from games.registry import make_game
from trainer.tabular_selfplay import public_states


def test_a_move_met_from_one_card_is_uncompared_and_weighs_more_per_state():
    public = {"a": "p", "b": "p", "c": "p"}
    # "bet" at p from a (three times) and b: compared; "check" from c only, met once: uncompared
    step = [("a", "bet"), ("a", "bet"), ("a", "bet"), ("b", "bet"), ("c", "check")]
    figures = coverage(step, public)
    assert figures["decisions"] == 5 and figures["information_sets"] == 3
    assert figures["uncompared_share_by_visits"] == pytest.approx(1 / 5, abs=1e-15)
    assert figures["uncompared_share_per_state"] == pytest.approx(1 / 3, abs=1e-15)  # a 1/3 x 3, b 1, c 1
    assert figures["uncompared_met_once_share_per_state"] == pytest.approx(1 / 3, abs=1e-15)
    # "check" from a only but met twice: uncompared, yet the state baseline has a second visit
    figures = coverage([("a", "check"), ("a", "check"), ("b", "bet"), ("c", "bet")], public)
    assert figures["uncompared_share_by_visits"] == pytest.approx(0.5, abs=1e-15)
    assert figures["uncompared_share_per_state"] == pytest.approx(1 / 3, abs=1e-15)
    assert figures["uncompared_met_once_share_per_state"] == 0.0


def test_a_drawn_kuhn_step_plays_legal_hands_from_the_tree():
    tree = build_tree(lambda: make_game("kuhn_poker", 2, **GAME_OPTIONS["kuhn_poker"]))
    step = draw_step(tree, uniform_strategy(tree), groups=16, group_size=4, rng=random.Random(0))
    assert 2 * 64 <= len(step) <= 3 * 64  # a Kuhn hand is two or three decisions
    assert all(move in tree.infosets[key].moves for key, move in step)
    figures = coverage(step, public_states(tree))
    assert 0 <= figures["uncompared_share_by_visits"] <= figures["uncompared_share_per_state"] <= 1
    assert step == draw_step(tree, uniform_strategy(tree), groups=16, group_size=4, rng=random.Random(0))  # seeded
