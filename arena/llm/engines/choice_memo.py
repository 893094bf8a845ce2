"""Choice scores remembered while the weights stay the same.

Self-play in choice mode asks the same question many times: in Kuhn poker a seat has 6 prompts, and
a step's 256 hands ask them about 600 times; in Tic-Tac-Toe the openings repeat in almost every
game. A choice's scores (every legal move's log-prob as the whole reply) are a function of the
prompt ids, the option ids, the adapter and the weights, so an identical request can take the
scores computed for the first one, and only the draw (seeded per request) is done again.

The weights' identity is read from torch itself: every in-place change of a tensor (an optimizer
step, `load_state_dict`, `copy_`) increments its version counter, so the parameters' versions
(with their storage) change whenever any weight changes, with no hook for trainers to forget. (Writes through
`param.data` bypass the counter; nothing in this project writes weights that way, and
tests/llm/test_choice_memo.py holds the learner's update to invalidating the memo.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable

import torch

from arena.llm.bounded_memo import BoundedMemo, ids_digest


@dataclass(frozen=True)
class ChoiceScores:
    """Every option's total log-prob [options] and its per-token log-probs [options, tokens]."""

    totals: torch.Tensor
    token_logprobs: torch.Tensor


def weights_signature(model: Any) -> Hashable:
    """Changes whenever any parameter of `model` changes in place, is replaced (`param.data = ...`)
    or is added (an adapter loaded): each parameter's storage and in-place version, hashed."""
    return (id(model), hash(tuple((p.data_ptr(), p._version) for p in model.parameters())))


class ChoiceMemo(BoundedMemo):
    """(weights, adapter, prompt ids, option ids) -> ChoiceScores; entries of older weights are
    never hit again and age out."""

    @staticmethod
    def key(signature: Hashable, adapter: str, prompt_ids: list[int], option_ids: list[list[int]]) -> Hashable:
        return (signature, adapter, ids_digest(prompt_ids, option_ids))
