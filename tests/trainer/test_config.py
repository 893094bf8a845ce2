"""Config errors: one line naming the file and the key."""

import pytest

from trainer.config import TrainConfigError, load_config, parse_config

GOOD = {"name": "t", "games": [{"id": "tictactoe"}]}


def _error(data):
    with pytest.raises(TrainConfigError) as info:
        parse_config(data, "train.yaml")
    message = str(info.value)
    assert "\n" not in message
    return message


def test_defaults_are_valid():
    config = parse_config(GOOD)
    assert config.opponents[0].kind == "self" and config.algorithm.advantage == "grpo"
    assert config.algorithm.share_prefix == "auto"
    assert parse_config({**GOOD, "algorithm": {"share_prefix": False}}).algorithm.share_prefix is False


@pytest.mark.parametrize(
    "patch, expected",
    [
        ({"algorithm": {"epsilon": 0}}, "train.yaml: algorithm.epsilon: "),
        ({"algorithm": {"advantage": "ppo"}}, "train.yaml: algorithm.advantage: "),
        ({"algorithm": {"micro_batch_size": 8, "minibatch_size": 4}}, "micro_batch_size must not exceed"),
        ({"algorithm": {"kl_coef": 0.1, "kl_reference": "adapter"}}, "ref_refresh_every"),
        ({"algorithm": {"kl_target": 0.2}}, "kl_target needs kl_coef > 0"),
        ({"algorithm": {"kl_coef": 0.1, "kl_target": 0}}, "train.yaml: algorithm.kl_target: "),
        ({"algorithm": {"kl_coef": 0.5, "kl_coef_max": 0.2}}, "kl_coef_max (0.2) must not be under kl_coef (0.5)"),
        ({"algorithm": {"max_update_kl": 0}}, "train.yaml: algorithm.max_update_kl: "),
        ({"algorithm": {"max_update_kl": 0.05, "max_update_halvings": -1}}, "train.yaml: algorithm.max_update_halvings: "),
        ({"games": [{"id": "tictactoe", "players": 5}]}, "train.yaml: games[0].id: "),
        ({"games": [{"id": "tictactoo"}]}, "did you mean tictactoe"),
        ({"opponents": [{"kind": "league"}]}, "train.yaml: opponents[0]: a league opponent needs"),
        ({"opponents": [{"kind": "league", "policies": ["opnai:gpt"]}]}, "opponents[0].policies[0]: unknown policy"),
        ({"rewards": {"terms": [{"kind": "custom", "function": "os.system"}]}}, "rewards.terms[0]: a custom reward needs"),
        ({"rewards": {"terms": [{"kind": "custom", "function": "nope_mod:f"}]}}, "rewards.terms[0].function: No module named"),
        ({"name": "../etc"}, "train.yaml: name: "),
        ({"base": "local+adapter"}, "train.yaml: base: "),
        ({"lora": {"rank": 8}}, "train.yaml: lora.rank: Extra inputs"),
        ({"rollout": {"engine": "vllm", "executor": "ray"}}, "rollout: `engine: vllm` needs `executor: local`"),
        ({"rollout": {"engine": "onnx"}}, "train.yaml: rollout.engine: "),
        ({"algorithm": {"tis_cap": 0.5}}, "train.yaml: algorithm.tis_cap: "),
        ({"algorithm": {"share_prefix": "sometimes"}}, "train.yaml: algorithm.share_prefix: must be auto, true or false, got 'sometimes'"),
    ],
)
def test_errors_name_the_key(patch, expected):
    assert expected in _error({**GOOD, **patch})


def test_files(tmp_path):
    with pytest.raises(TrainConfigError, match="no such file"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(TrainConfigError, match="bad.yaml: line"):
        load_config(bad)


def test_example_configs_load():
    assert load_config("examples/train-tictactoe-cpu.yaml").name == "ttt-cpu"
    kuhn = load_config("examples/train-kuhn-choice-cpu.yaml")
    assert (kuhn.rollout.mode, kuhn.rollout.temperature, kuhn.algorithm.entropy_coef) == ("choice", 5.0, 0.02)
    assert kuhn.algorithm.merge_duplicates and not load_config("examples/train-tictactoe-cpu.yaml").algorithm.merge_duplicates


@pytest.mark.parametrize("game, path", [("kuhn_poker", "examples/train-kuhn-choice-cpu.yaml"),
                                        ("leduc_holdem", "examples/train-leduc-choice-cpu.yaml")])
def test_a_poker_example_is_the_strategy_benchs_configuration(game, path):
    """Each example says it is what bench.strategy runs for its game; the figures quoted for one hold for the other."""
    from bench.strategy import build_config, defaults

    example = load_config(path)
    bench = parse_config(build_config(defaults(game)), "bench")
    assert example.steps == bench.steps and example.games == bench.games and example.opponents == bench.opponents
    assert example.rollout == bench.rollout and example.rewards == bench.rewards and example.lora == bench.lora
    assert example.algorithm == bench.algorithm


def test_the_strategy_benchs_lagged_share_draws_earlier_checkpoints():
    """--lagged F: that share of the groups meets a checkpoint of the run (saved every 2 steps), the
    rest self-play; at 0 nothing is checkpointed and every group is self-play. Tic-Tac-Toe's
    default is half the groups, with the KL coefficient adapted to a drift of 0.25."""
    import random

    from bench.strategy import build_config, defaults
    from trainer.rollouts import OpponentPool

    default = parse_config(build_config(defaults("tictactoe")), "bench")
    assert [(o.kind, o.weight) for o in default.opponents] == [("self", 0.5), ("lagged", 0.5)]
    assert (default.algorithm.kl_coef, default.algorithm.kl_target) == (0.1, 0.25)
    assert parse_config(build_config(defaults("kuhn_poker")), "bench").algorithm.kl_target is None
    plain = parse_config(build_config(defaults("tictactoe", lagged=0.0)), "bench")
    assert [o.kind for o in plain.opponents] == ["self"] and plain.checkpoint.every == 100_000
    mixed = parse_config(build_config(defaults("tictactoe", lagged=0.25)), "bench")
    assert [(o.kind, o.weight) for o in mixed.opponents] == [("self", 0.75), ("lagged", 0.25)]
    assert mixed.opponents[1].sampling == "pfsp" and mixed.checkpoint.every == 2 and not mixed.checkpoint.register_in_league
    pool = OpponentPool(mixed.opponents, checkpoints=["hf:local+/runs/x/step-2,mode=choice"])
    rng = random.Random(0)
    drawn = [pool.draw(rng) for _ in range(2000)]
    lagged = sum(kind == "lagged" for kind, _ in drawn) / len(drawn)
    assert abs(lagged - 0.25) < 0.04  # 2000 draws: the share's standard error is ~0.01
    assert {spec for kind, spec in drawn if kind == "lagged"} == {"hf:local+/runs/x/step-2,mode=choice"}


def test_state_observations_reach_the_learner_and_its_checkpoints(tmp_path):
    from pathlib import Path

    from arena.llm.prompting import ObsMode
    from trainer.rollouts import learner_settings
    from trainer.run import checkpoint_spec

    config = parse_config({**GOOD, "rollout": {"obs": "state"}, "rewards": {"attempt_credit": 0.5}})
    assert config.rollout.obs == "state" and config.rewards.attempt_credit == 0.5
    assert parse_config(GOOD).rollout.obs == "history"
    assert learner_settings(config.rollout).obs is ObsMode.STATE
    folder = Path(tmp_path / "step-3")
    assert checkpoint_spec("local", folder, "state") == f"hf:local+{folder.resolve()},obs=state"
    assert checkpoint_spec("local", folder) == f"hf:local+{folder.resolve()}"
    # a choice-mode checkpoint plays the draw it was trained as, and its spec is a valid one
    choice = checkpoint_spec("local", folder, "state", "choice", 5.0)
    assert choice == f"hf:local+{folder.resolve()},obs=state,mode=choice,temperature=5"
    from arena.llm.llm_policy import LOCAL_PARAMS, LLMSettings
    from arena.policy import PolicySpec

    assert LLMSettings.from_spec(PolicySpec.parse(choice), LOCAL_PARAMS, default_max_new_tokens=8).temperature == 5.0
    # a run with a prompt variant trains with it, and its checkpoints are played and rated with it
    restated = parse_config({**GOOD, "rollout": {"mode": "choice", "obs": "state", "prompt": "Private-Last"}}).rollout
    assert restated.prompt == "private-last" and learner_settings(restated).harness.prompt.private_last
    spec = checkpoint_spec("local", folder, "state", "choice", 5.0, restated.prompt)
    assert spec == f"hf:local+{folder.resolve()},obs=state,prompt=private-last,mode=choice,temperature=5"
    assert LLMSettings.from_spec(PolicySpec.parse(spec), LOCAL_PARAMS, default_max_new_tokens=8).harness.prompt.private_last
    from trainer.run import Trainer  # what registration, evaluation and lagged opponents use

    trainer = Trainer(parse_config({**GOOD, "output_dir": str(tmp_path), "rollout": {"mode": "choice", "obs": "state", "temperature": 5.0, "prompt": "private-last"}}))
    assert trainer.spec_of(folder) == spec
    # as a lagged opponent it adds only what the league spec does not say
    from trainer.rollouts import checkpoint_play_params

    choice_run = parse_config({**GOOD, "rollout": {"mode": "choice", "temperature": 5.0, "max_new_tokens": 4}}).rollout
    assert checkpoint_play_params(choice_run) == ",max_new_tokens=4"
    assert checkpoint_play_params(config.rollout) == ",temperature=1,max_new_tokens=32"
    assert "rollout.obs" in _error({**GOOD, "rollout": {"obs": "full"}})
    assert "rollout.prompt: prompt must be default, no-legal-moves, san or private-last" in _error({**GOOD, "rollout": {"prompt": "short"}})
    assert "`prompt: no-legal-moves` needs `mode: text`" in _error({**GOOD, "rollout": {"prompt": "no-legal-moves", "mode": "choice"}})
    assert "rewards.attempt_credit" in _error({**GOOD, "rewards": {"attempt_credit": -1}})
