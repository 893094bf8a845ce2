"""The engine contract (arena/llm/engines): both engines implement it, one registry hands them out,
the engine preference is a value handed down, and scoring on another engine is explicit."""

from __future__ import annotations

import asyncio
import contextlib
import math

import pytest

from arena.llm.engines import CannotScore, Engine, EnginePreference, SamplingParams, engine_kind, open_engine, scoring_engine
from arena.llm.engines.registry import ENV_DEFAULT
from arena.match import play_match
from arena.policy import PolicySpecError, make_policy
from games.registry import make_game

MESSAGES = [
    {"role": "system", "content": "You play Tic-Tac-Toe as X."},
    {"role": "user", "content": "Board:\n1|2|3\n4|5|6\n7|8|9\nPick a free cell. Answer like [5]."},
]


@pytest.fixture(scope="module")
def hf_engine():
    return open_engine("local", "hf")


def test_the_hf_engine_implements_the_contract(hf_engine):
    assert isinstance(hf_engine, Engine)
    assert hf_engine.kind == "hf" and hf_engine.can_score and hf_engine.dtype == "float32"
    assert open_engine("local", "hf") is hf_engine  # one per (kind, base) per process
    assert scoring_engine(hf_engine) is hf_engine
    health = hf_engine.health()
    assert health["engine"] == "hf" and health["dtype"] == "float32" and "requests" in health


@pytest.mark.slow
def test_the_vllm_engine_implements_the_contract_and_names_its_scorer(vllm_engine, hf_engine):
    assert isinstance(vllm_engine, Engine)
    assert vllm_engine.kind == "vllm" and not vllm_engine.can_score and vllm_engine.dtype == "float32"
    assert scoring_engine(vllm_engine) is hf_engine
    with pytest.raises(CannotScore):
        asyncio.run(vllm_engine.choose(MESSAGES, ["1", "2"]))
    assert vllm_engine.health()["engine"] == "vllm"


@pytest.mark.slow
def test_a_choice_policy_on_vllm_says_its_moves_are_scored_on_hf(vllm_engine, capsys):
    policy = make_policy("local,engine=vllm,mode=choice,temperature=1,seed=2")
    assert policy.engine is vllm_engine
    record = asyncio.run(play_match(make_game("tictactoe"), [policy, make_policy("random")], seed=3))
    mine = [t for t in record.turns if t.player == 0]
    assert policy.engine_label == "vllm+hf"
    assert mine and all(t.meta["engine"] == "vllm+hf" and t.valid for t in mine)  # each turn names both engines
    err = capsys.readouterr().err
    assert err.count("legal moves are scored on the hf engine") == 1, err


def test_the_engine_choice_goes_spec_then_environment_then_the_commands_preference(monkeypatch, capsys):
    monkeypatch.delenv(ENV_DEFAULT, raising=False)
    preference = EnginePreference("hf", "a test prefers it")
    assert engine_kind("vllm", preference) == "vllm"
    assert engine_kind(None, preference) == "hf"
    assert "a test prefers it" in capsys.readouterr().err
    assert engine_kind(None, None) == "auto"
    monkeypatch.setenv(ENV_DEFAULT, "vllm")
    assert engine_kind(None, preference) == "vllm"
    assert engine_kind("hf", preference) == "hf"
    monkeypatch.setenv(ENV_DEFAULT, "gpu")
    with pytest.raises(PolicySpecError, match=ENV_DEFAULT):
        engine_kind(None, preference)
    with pytest.raises(PolicySpecError, match="engine="):
        engine_kind("tpu", None)


def test_a_commands_preference_reaches_only_the_policies_it_builds(monkeypatch):
    """No process state: a policy built without the preference does not inherit it."""
    monkeypatch.delenv(ENV_DEFAULT, raising=False)
    preferred = make_policy("local,max_new_tokens=4", {"engine": ("hf", "a test prefers it")})
    assert preferred.engine_kind == "hf"
    assert make_policy("local,engine=hf").spec == "local,engine=hf"
    assert make_policy("random", {"engine": ("hf", "ignored by kinds without engines")}).name == "random"


def test_the_hf_engines_sampled_log_probs_are_the_models_own(hf_engine):
    """What the trainer compares its learner with: each sampled token's log-prob under the
    distribution it was drawn from (here T = 1, so the model's own), checked against one plain
    forward pass over prompt + reply. float32 log-softmax over a 49k vocabulary: 1e-4 holds."""
    import torch

    params = SamplingParams(temperature=1.0, max_new_tokens=8, seed=11, logprobs=True)
    reply = asyncio.run(hf_engine.chat(MESSAGES, params))
    assert reply.engine == "hf" and len(reply.completion_logprobs) == len(reply.completion_ids) >= 1
    ids = torch.tensor([reply.prompt_ids + reply.completion_ids])
    # The engine is the process's one: another test's learner may have left its adapter active on
    # the model, and a request without an adapter runs the bare base (peft's per-row names).
    bare = hf_engine.model.disable_adapter() if hasattr(hf_engine.model, "disable_adapter") else contextlib.nullcontext()
    with torch.inference_mode(), hf_engine.model_lock, bare:
        logits = hf_engine.model(input_ids=ids).logits[0].float()
    start = len(reply.prompt_ids)
    expected = logits[start - 1 : -1].log_softmax(-1).gather(1, torch.tensor(reply.completion_ids).unsqueeze(1)).squeeze(1)
    assert torch.allclose(torch.tensor(reply.completion_logprobs), expected, atol=1e-4), (reply.completion_logprobs, expected)
    greedy = asyncio.run(hf_engine.chat(MESSAGES, SamplingParams(temperature=0.0, max_new_tokens=4, logprobs=True)))
    assert all(math.isfinite(x) and x <= 0 for x in greedy.completion_logprobs)
