"""Learner.prepare, the passes without gradients before an update, with the model's forward
replaced by a stand-in that returns known log-probs: which turns are recomputed (a few check rows
per kind, every turn whose sampler was not the learner), which keep the sampler's log-probs, and
that every turn leaves with its behaviour and reference log-probs, whatever the mix."""

from __future__ import annotations

import contextlib

import torch

from arena.llm.engines.choice_memo import BoundedMemo
from trainer.config import AlgorithmSettings
from trainer.learner import CHECK_ROWS, Learner, Sample
from trainer.micro_batch_memory import RowMemory

SEAT = list(range(100, 140))  # one seat's system prompt, long enough to be a shared prefix


class Model:
    """The learner's model as prepare uses it: eval mode, and the adapter switched off."""

    def __init__(self) -> None:
        self.adapter_on = True

    def eval(self) -> None:
        pass

    @contextlib.contextmanager
    def disable_adapter(self):
        self.adapter_on = False
        try:
            yield
        finally:
            self.adapter_on = True


def _learner(**settings) -> tuple[Learner, list[tuple[str, int]]]:
    learner = object.__new__(Learner)  # prepare's collaborators only, no model weights
    learner.settings = AlgorithmSettings(minibatch_size=64, share_prefix=True, **settings)
    learner.row_memory, learner.max_new_tokens, learner.vocab_size = RowMemory(layers=30, heads=9, units=2112), 4, 49152
    learner.model, learner.base_logps, learner.ref_name = Model(), BoundedMemo(), None
    passes: list[tuple[str, int]] = []

    def action_logps(chunk, adapter_names=None, with_entropy=False):
        # the behaviour pass gives -1 per position, the base model -2, a reference adapter -3
        who = "reference" if adapter_names else ("behaviour" if learner.model.adapter_on else "base")
        passes.append((who, len(chunk)))
        value = {"behaviour": -1.0, "base": -2.0, "reference": -3.0}[who]
        width = max(x.action_length for x in chunk)
        return torch.full((len(chunk), width), value), torch.ones(len(chunk), width), None

    learner._action_logps = action_logps
    return learner, passes


def _turn(n: int, choice: bool, by_learner: bool) -> Sample:
    prompt = SEAT + [1000 + n]
    if choice:
        options = [[5, 0], [6, 0]]
        return Sample(prompt, options[0], 1.0, option_ids=options, chosen=0, sampler_logps=[-0.5], sampled_by_learner=by_learner)
    return Sample(prompt, [7, 8, 0], 1.0, sampler_logps=[-0.5] * 3, sampled_by_learner=by_learner)


def test_each_kind_checks_a_few_rows_and_foreign_turns_are_all_recomputed():
    learner, passes = _learner(micro_batch_size=16)
    foreign = [_turn(n, choice=n % 2 == 0, by_learner=False) for n in range(4)]  # e.g. vLLM or a Ray collector
    own_choice = [_turn(10 + n, choice=True, by_learner=True) for n in range(12)]
    own_text = [_turn(30 + n, choice=False, by_learner=True) for n in range(12)]
    samples = foreign[:2] + [x for pair in zip(own_choice, own_text) for x in pair] + foreign[2:]
    learner.prepare(samples, need_ref=True)
    recomputed = [x for x in samples if float(x.old_logps[0]) == -1.0]
    reused = [x for x in samples if float(x.old_logps[0]) == -0.5]
    assert len(recomputed) + len(reused) == len(samples)
    assert all(x in recomputed for x in foreign)
    assert sum(x in recomputed for x in own_choice) == CHECK_ROWS
    assert sum(x in recomputed for x in own_text) == CHECK_ROWS
    assert all(x.is_weights is None for x in reused)  # the learner's own policy: no correction
    assert all(x.is_weights is not None for x in recomputed)  # tis weights from the sampler's log-probs
    assert all(x.ref_logps is not None and float(x.ref_logps[0]) == -2.0 for x in samples)
    # one behaviour forward per kind and one base forward per kind (the kinds never share one)
    assert sorted(passes) == [("base", 14), ("base", 14), ("behaviour", 10), ("behaviour", 10)]


def test_the_check_never_outgrows_a_micro_batch_and_comes_from_one_prefix():
    learner, passes = _learner(micro_batch_size=2)
    other_seat = [Sample([9] * 40 + [n], [7, 0], 1.0, sampler_logps=[-0.5] * 2, sampled_by_learner=True) for n in range(3)]
    samples = [x for pair in zip(other_seat, [_turn(n, False, True) for n in range(3)]) for x in pair]
    learner.prepare(samples, need_ref=False)
    checked = [x for x in samples if float(x.old_logps[0]) == -1.0]
    assert passes == [("behaviour", 2)]
    assert len({tuple(x.prompt_ids[:40]) for x in checked}) == 1
    assert all(x.ref_logps is None for x in samples)


def test_a_reference_adapter_scores_every_turn_in_scoring_chunks():
    learner, passes = _learner(micro_batch_size=2, kl_reference="adapter", ref_refresh_every=1)
    learner.ref_name = "reference"
    samples = [_turn(n, choice=False, by_learner=False) for n in range(10)]
    learner.prepare(samples, need_ref=True)
    assert all(float(x.ref_logps[0]) == -3.0 for x in samples)
    assert [n for who, n in passes if who == "reference"] == [8, 2]  # 4 micro-batches of 2 a forward
