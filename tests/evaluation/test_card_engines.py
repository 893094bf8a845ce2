"""A card is made on one engine and says which; a resumed evaluation keeps its engine; `arena eval
compare` refuses cards of different engines (or suites, or subsets) in one line."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

from arena.policy import PolicyReply, PolicySpec, register_kind
from arena.scripted import RandomPolicy
from evaluation.card_comparison import CardsDoNotCompare, compare_cards
from evaluation.report_card import card_engine
from evaluation.suite_evaluation import SUITE_ENGINE, engine_defaults, evaluation_config, run_evaluation, stored_engines
from evaluation.suites import SuiteError, load_suite
from league.store import Store


class LabelledRandom(RandomPolicy):
    """Random legal moves whose turns carry an engine label, as a local policy's do."""

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label

    async def act(self, request):  # type: ignore[override]
        reply: PolicyReply = await super().act(request)
        reply.meta = {**reply.meta, "engine": self.label}
        return reply


def _labelled(spec: PolicySpec) -> LabelledRandom:
    return LabelledRandom(spec.params.get("label", "vllm"))


register_kind("labelled-random", _labelled, "labelled-random,label=vllm")


def test_a_card_names_the_engine_its_turns_carry():
    assert card_engine([]) is None
    assert card_engine(["vllm+hf"]) == "vllm+hf"
    assert card_engine(["hf", "vllm"]) == "mixed: hf, vllm"


def test_local_candidates_play_on_the_suites_engine_and_resume_on_their_own(tmp_path):
    suite = load_suite("core-v1")
    store = Store(f"sqlite:///{tmp_path / 'eval.db'}")
    config = evaluation_config(suite, "labelled-random,label=vllm", "cand", True)
    assert engine_defaults(store, config, "cand", "local")["engine"][0] == SUITE_ENGINE == "hf"
    card, _ = run_evaluation(store, suite, "labelled-random,label=vllm", "cand", quick=True)
    assert card["engine"] == "vllm" and card["schema"] == 2
    assert stored_engines(store, config.name, "cand") == ["vllm"]
    # a run of the same evaluation continues on the engine it started on ...
    assert engine_defaults(store, config, "cand", "local")["engine"][0] == "vllm"
    # ... and a spec that names another is refused, saying how to resume
    with pytest.raises(SuiteError, match="started on the vllm engine.*engine=vllm"):
        engine_defaults(store, config, "cand", "local,engine=hf")
    store.close()


def _card(engine: str | None, rating: float, **changes) -> dict:
    card = {"schema": 2, "suite": "core-v1", "quick": True, "policy": f"p{rating:.0f}", "engine": engine,
            "rating": {"rating": rating, "lo": rating - 50, "hi": rating + 50, "comparisons": 40},
            "games": [{"game": "tictactoe", "score": 0.5}]}
    card.update(changes)
    return card


def test_cards_compare_only_on_one_suite_subset_and_engine():
    comparison = compare_cards(_card("hf", 900), _card("hf", 1100))
    assert comparison.separated is True and comparison.engine == "hf"
    assert compare_cards(_card("hf", 900), _card("hf", 950)).separated is False
    for other, what in [(_card("vllm", 900), "different engines"), (_card("hf", 900, suite="core-v2"), "different suites"),
                        (_card("hf", 900, quick=False), "different subsets"), (_card("mixed: hf, vllm", 900), "several engines")]:
        with pytest.raises(CardsDoNotCompare, match=what):
            compare_cards(_card("hf", 900), other)


def test_arena_eval_compare_prints_a_verdict_or_one_line_why_not(tmp_path):
    paths = {}
    for name, card in {"a": _card("hf", 900), "b": _card("hf", 1100), "c": _card("vllm", 1100)}.items():
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(card))
    ok = subprocess.run([sys.executable, "-m", "llm_arena_cli", "eval", "compare", str(paths["a"]), str(paths["b"])],
                        capture_output=True, text=True)
    assert ok.returncode == 0 and "the 95% intervals are apart" in ok.stdout, ok.stdout + ok.stderr
    refused = subprocess.run([sys.executable, "-m", "llm_arena_cli", "eval", "compare", str(paths["a"]), str(paths["c"])],
                             capture_output=True, text=True)
    lines = [line for line in refused.stderr.splitlines() if line.strip()]
    assert refused.returncode == 2 and len(lines) == 1 and "different engines (hf and vllm)" in lines[0], refused.stderr
    old = copy.deepcopy(_card(None, 900))
    old.pop("engine")
    paths["old"] = tmp_path / "old.json"
    paths["old"].write_text(json.dumps(old))
    legacy = subprocess.run([sys.executable, "-m", "llm_arena_cli", "eval", "compare", str(paths["old"]), str(paths["a"])],
                            capture_output=True, text=True)
    assert legacy.returncode == 2 and "none named and hf" in legacy.stderr
