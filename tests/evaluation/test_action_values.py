"""evaluation.exploitability.action_values: reaches and move values that give the exact policy gradient."""

from __future__ import annotations

import math
import random

import pytest

from evaluation.exploitability import action_values, evaluate, uniform_strategy


def softmax_strategy(tree, logits: dict) -> dict:
    out = {}
    for key, info in tree.infosets.items():
        weights = [math.exp(logits[(key, m)]) for m in info.moves]
        out[key] = {m: w / sum(weights) for m, w in zip(info.moves, weights)}
    return out


def seat_values(tree, strategy) -> tuple[float, float]:
    first = evaluate(tree, strategy).value
    return first, -first  # Kuhn poker is zero-sum (checked below)


def test_values_give_the_exact_policy_gradient(kuhn_tree) -> None:
    # d V_p / d z(I, a) = reach(I) pi(a|I) (Q(I, a) - V(I)), checked against central differences at
    # a random softmax profile. Float64 throughout: the difference's truncation error is O(h^2)
    # ~ 1e-10 and its rounding ~ 1e-16 * |V| / h ~ 1e-11, so 1e-8 holds on every run.
    assert all(sum(leaf_utilities(root)) == 0 for _, root in kuhn_tree.deals)
    rng = random.Random(7)
    logits = {(key, m): rng.uniform(-1.5, 1.5) for key, info in kuhn_tree.infosets.items() for m in info.moves}
    strategy = softmax_strategy(kuhn_tree, logits)
    values = action_values(kuhn_tree, strategy)
    h = 1e-5
    for key, info in kuhn_tree.infosets.items():
        player = key[0]
        node = values[key]
        v = sum(strategy[key][m] * node.values[m] for m in info.moves)
        for move in info.moves:
            plus, minus = dict(logits), dict(logits)
            plus[(key, move)] += h
            minus[(key, move)] -= h
            numeric = (seat_values(kuhn_tree, softmax_strategy(kuhn_tree, plus))[player]
                       - seat_values(kuhn_tree, softmax_strategy(kuhn_tree, minus))[player]) / (2 * h)
            exact = node.reach * strategy[key][move] * (node.values[move] - v)
            assert exact == pytest.approx(numeric, abs=1e-8), (key[1].splitlines()[-3:], move)


def leaf_utilities(node) -> tuple[float, float]:
    """The sum of both seats' utilities over a deal's leaves (0 per leaf in a zero-sum game)."""
    if node.key is None:
        return node.utilities
    totals = [leaf_utilities(child) for child in node.children.values()]
    return sum(t[0] for t in totals), sum(t[1] for t in totals)


def test_first_decisions_are_met_once_per_deal_card(kuhn_tree) -> None:
    # Seat 0 acts first in every deal: its three first information sets (one per card) are each
    # met in a third of the hands, whatever the strategy; every value is a finite chip count.
    values = action_values(kuhn_tree, uniform_strategy(kuhn_tree))
    first = [node.reach for key, node in values.items() if key[0] == 0 and len(node.values) == 2 and math.isclose(node.reach, 1 / 3)]
    assert len(first) == 3
    assert sum(node.reach for key, node in values.items() if key[0] == 1) == pytest.approx(1.0)  # seat 1 acts exactly once a hand
    assert all(math.isfinite(q) for node in values.values() for q in node.values.values())


def test_a_set_never_reached_keeps_defined_values(kuhn_tree) -> None:
    # Always check and never bet: no one ever faces a bet, so those sets have reach 0, and their
    # values are still the mean over their histories (calling a bet with a King wins).
    passive = {key: {m: 1.0 if m in ("check", "fold") else 0.0 for m in info.moves} for key, info in kuhn_tree.infosets.items()}
    values = action_values(kuhn_tree, passive)
    facing_bet = [key for key, info in kuhn_tree.infosets.items() if "call" in info.moves]
    assert facing_bet and all(values[key].reach == 0 for key in facing_bet)
    king = [key for key in facing_bet if "Your card: K" in key[1]]
    assert king and all(values[key].values["call"] > values[key].values["fold"] for key in king)
