"""Our games as verifiers (0.4) environments, run by verifiers' own evaluation (`run_eval`, the
code behind `vf-eval`) with its OpenAI-compatible client pointed at `arena serve-model` on the
shipped model: the rewards verifiers reports equal the outcomes our league store records for the
same seeds."""

from __future__ import annotations

import asyncio

import pytest
from verifiers.v1.cli.eval.runner import run_eval
from verifiers.v1.configs.cli.eval import EvalConfig

from interop.verifiers import PLAYER_NAME, REWARD_NAME, load_environment
from league.store import Store
from tests.llm.test_over_http import _serve

pytestmark = pytest.mark.slow

SEEDS = [0, 1]


@pytest.fixture(scope="module")
def server():
    yield from _serve()


def test_verifiers_eval_rewards_equal_the_stored_outcomes(server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ARENA_TEST_DUMMY_KEY", "unused")  # verifiers reads the key from an env var
    store_url = f"sqlite:///{tmp_path / 'episodes.db'}"
    env = load_environment(
        game="kuhn_poker", opponents=["bot"], options={"hands": 1}, first_seed=SEEDS[0], num_seeds=len(SEEDS), store=store_url
    )
    config = EvalConfig.model_validate(
        {
            "env": env.config,
            "model": "local",
            "client": {"type": "eval", "base_url": server, "api_key_var": "ARENA_TEST_DUMMY_KEY"},
            "sampling": {"temperature": 0.0, "max_tokens": 12},
            "rich": None,
            "output_dir": str(tmp_path / "outputs"),
        }
    )
    episodes = asyncio.run(run_eval(config))
    assert len(episodes) == len(SEEDS) and all(e.ok for e in episodes), [e.errors for e in episodes]
    reported = {}
    for episode in episodes:
        (trace,) = episode.traces
        assert trace.calls and all(call.error is None for call in trace.calls)  # the model really played
        reported[trace.info["seed"]] = trace.rewards[REWARD_NAME].score
    with Store(store_url) as store:
        records = list(store.iter_records())
    assert sorted(r.seed for r in records) == SEEDS
    for record in records:
        assert record.policies[0] == PLAYER_NAME and record.specs[1] == "bot"
        assert reported[record.seed] == record.outcome["scores"][0]
