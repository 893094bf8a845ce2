"""Choice scores remembered while the weights stay the same.

Self-play in choice mode asks the same question many times: in Kuhn poker a seat has 6 prompts, and
a step's 256 hands ask them about 600 times; in Tic-Tac-Toe the openings repeat in almost every
game. A choice's scores (every legal move's log-prob as the whole reply) are a function of the
prompt ids, the option ids, the adapter and the weights, so an identical request can take the
scores computed for the first one, and only the draw (seeded per request) is done again.

The weights' identity is read from torch itself: every in-place change of a tensor (an optimizer
step, `load_state_dict`, `copy_`) increments its version counter, so the sum of the parameters'
versions changes whenever any weight changes, with no hook for trainers to forget. (Writes through
`param.data` bypass the counter; nothing in this project writes weights that way, and
tests/llm/test_choice_memo.py holds the learner's update to invalidating the memo.)
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any, Hashable

import torch

DEFAULT_ENTRIES = 8192  # a Kuhn or Leduc step needs dozens to hundreds; Tic-Tac-Toe a few thousand


@dataclass(frozen=True)
class ChoiceScores:
    """Every option's total log-prob [options] and its per-token log-probs [options, tokens]."""

    totals: torch.Tensor
    token_logprobs: torch.Tensor


def weights_signature(model: Any) -> Hashable:
    """Changes whenever any parameter of `model` changes in place, or parameters are added (an
    adapter loaded)."""
    count = 0
    versions = 0
    for parameter in model.parameters():
        count += 1
        versions += parameter._version  # torch's in-place counter (autograd's saved-tensor check)
    return (id(model), count, versions)


class ChoiceMemo:
    """A bounded least-recently-used map from (weights, adapter, prompt ids, option ids) to the
    scores; entries of older weights are never hit again and age out."""

    def __init__(self, entries: int = DEFAULT_ENTRIES):
        self.entries = entries
        self._scores: "collections.OrderedDict[Hashable, ChoiceScores]" = collections.OrderedDict()

    @staticmethod
    def key(signature: Hashable, adapter: str, prompt_ids: list[int], option_ids: list[list[int]]) -> Hashable:
        return (signature, adapter, tuple(prompt_ids), tuple(tuple(ids) for ids in option_ids))

    def get(self, key: Hashable) -> ChoiceScores | None:
        scores = self._scores.get(key)
        if scores is not None:
            self._scores.move_to_end(key)
        return scores

    def put(self, key: Hashable, scores: ChoiceScores) -> None:
        if self.entries <= 0:
            return
        self._scores[key] = scores
        self._scores.move_to_end(key)
        while len(self._scores) > self.entries:
            self._scores.popitem(last=False)

    def __len__(self) -> int:
        return len(self._scores)
