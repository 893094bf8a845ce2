"""bench.core_climb rates the base and the final adapter each with the spec the run trained and
played with: its observation, its prompt variant, its mode and its sampling."""

import yaml

from arena.llm.llm_policy import LOCAL_PARAMS, LLMSettings
from arena.policy import PolicySpec
from bench.core_climb import play_spec


def test_the_rated_spec_is_the_runs_own(tmp_path):
    config = {"name": "c", "base": "local", "games": [{"id": "kuhn_poker"}],
              "rollout": {"obs": "state", "prompt": "private-last", "mode": "choice", "temperature": 5.0, "max_new_tokens": 4}}
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    adapter = tmp_path / "final"
    base, trained = play_spec(path, None), play_spec(path, adapter)
    assert base == "local,engine=hf,obs=state,prompt=private-last,mode=choice,temperature=5,max_new_tokens=4"
    assert trained == f"hf:local+{adapter.resolve()}" + base.removeprefix("local")
    settings = LLMSettings.from_spec(PolicySpec.parse(trained), LOCAL_PARAMS, default_max_new_tokens=8)
    assert settings.harness.prompt.private_last and settings.temperature == 5.0 and settings.max_new_tokens == 4
