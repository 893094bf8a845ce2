"""How the learner cuts a step's rows into optimizer steps (trainer.learner.minibatch_indices):
rows of one minibatch group (the private contrast's public state) always share a step; rows
without a group are shuffled and sliced exactly as before groups existed."""

from __future__ import annotations

import random

import pytest

from trainer.learner import Sample, minibatch_indices, minibatch_units


def _rows(groups: list[object]) -> list[Sample]:
    return [Sample([1, 2], [3], advantage=1.0, minibatch_group=group) for group in groups]


def _sliced(n: int, size: int, epochs: int, seed: int) -> list[list[list[int]]]:
    """The learner's cut before groups: one order, reshuffled each epoch, sliced every `size`."""
    rng, order, out = random.Random(seed), list(range(n)), []
    for _ in range(epochs):
        rng.shuffle(order)
        out.append([order[i:i + size] for i in range(0, n, size)])
    return out


@pytest.mark.parametrize("n, size", [(10, 4), (9, 3), (3, 8), (1, 1)])
def test_rows_without_a_group_are_cut_as_plain_shuffled_slices(n, size):
    units, rng = minibatch_units(_rows([None] * n)), random.Random(7)
    assert [minibatch_indices(units, size, rng) for _ in range(3)] == _sliced(n, size, 3, 7)


def test_a_groups_rows_share_one_optimizer_step_in_every_epoch():
    groups = ["a", None, "b", "a", "c", None, "b", "a", None, "c", "c", "d"]
    units, rng = minibatch_units(_rows(groups)), random.Random(0)
    assert sorted(map(sorted, units)) == [[0, 3, 7], [1], [2, 6], [4, 9, 10], [5], [8], [11]]
    firsts = set()
    for _ in range(20):
        steps = minibatch_indices(units, 4, rng)
        assert sorted(i for step in steps for i in step) == list(range(len(groups)))  # every row once an epoch
        assert all(len(step) <= 4 for step in steps)
        for key in ("a", "b", "c"):
            members = {i for i, g in enumerate(groups) if g == key}
            assert sum(bool(members & set(step)) for step in steps) == 1, key  # never split
        firsts.add(tuple(steps[0]))
    assert len(firsts) > 1  # the order still changes from epoch to epoch


def test_a_group_larger_than_the_minibatch_takes_a_step_alone():
    steps = minibatch_indices(minibatch_units(_rows(["big"] * 5 + [None, None])), 2, random.Random(1))
    assert sorted(range(5)) in [sorted(step) for step in steps]
    assert sorted(len(step) for step in steps) in ([1, 1, 5], [2, 5])
