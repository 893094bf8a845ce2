"""League files: one-line errors that name the file, the key path and the problem; lazy specs."""

from pathlib import Path

import pytest

from league.config import ConfigError, load_config, parse_config

ROOT = Path(__file__).resolve().parents[2]
OK = "games: [{id: tictactoe}]\npolicies: [bot, random]\n"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("games: [{id: tictactoe}]\npolicies: [bot, random, 'opnai:gpt-4o']", "policies[2].spec: unknown policy 'opnai:gpt-4o'; did you mean openai?"),
        ("games: [{id: tictactoe}]\npolicies: [bot, randm]", "policies[1].spec: unknown policy 'randm'; did you mean random?"),
        ("games: [{id: tictactoe}]\npolicies: [bot, 'random,seed']", "policies[1].spec: policy spec 'random,seed': parameter 'seed' is not key=value"),
        ("games: [{id: tictactoe}]\npolicies: [bot, {name: x}]", "policies[1].spec: Field required"),
        ("games: [{id: tictactoo}]\npolicies: [bot, random]", "games[0].id: unknown game 'tictactoo'; did you mean tictactoe"),
        ("games: [{id: tictactoe, players: 3}]\npolicies: [bot, random, {name: r2, spec: random}]", "games[0].id: tictactoe takes 2 players, not 3"),
        ("games: [{id: tictactoe, weight: 0}]\npolicies: [bot, random]", "games[0].weight: Input should be greater than 0"),
        ("games: [{id: tictactoe}, {id: tictactoe}]\npolicies: [bot, random]", "each game may appear once; repeated: tictactoe"),
        ("games: [{id: tictactoe}]\npolicies: [bot]", "policies: List should have at least 2 items"),
        ("games: [{id: tictactoe}]\npolicies: [bot, bot]", "policy names must be unique; repeated: bot"),
        (OK + "concurency: 3", "concurency: Extra inputs are not permitted"),
        (OK + "concurrency: 0", "concurrency: Input should be greater than or equal to 1"),
        (OK + "provider_limits: {openai: 0}", "provider_limits: Value error, limits must be at least 1"),
        (OK + "scheduler: adaptive", "the adaptive scheduler needs `budget`"),
        (OK + "scheduler: elimination", "scheduler: Input should be 'round_robin', 'swiss', 'adaptive' or 'fixed'"),
        (OK + "move_timeout: -1", "move_timeout: Input should be greater than 0"),
        ("games: [{id: tictactoe\n", "line 2: not valid YAML"),
        ("- just\n- a list\n", "(top level): expected a mapping"),
    ],
)
def test_errors_name_file_key_and_problem(tmp_path, text, expected):
    path = tmp_path / "league.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert expected.replace("Value error, ", "") in message, message
    assert "\n" not in message


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_config(tmp_path / "nope.yaml")


def test_defaults_names_and_lazy_llm_specs():
    config = parse_config({
        "games": [{"id": "tictactoe"}, {"id": "nim", "weight": 2, "options": {}}],
        "policies": ["bot", {"name": "smol-cold", "spec": "local,temperature=0.3,max_new_tokens=24"}, "openai:gpt-4o-mini"],
        "provider_limits": {"openai": 4},
    })
    assert [p.name for p in config.policies] == ["bot", "smol-cold", "openai:gpt-4o-mini"]
    assert config.matches_per_pair == 1 and config.scheduler == "round_robin" and config.concurrency == 8
    assert config.games[1].weight == 2


def test_schedule_hash_ignores_pace_settings():
    base = {"games": [{"id": "tictactoe"}], "policies": ["bot", "random"]}
    a = parse_config(base).schedule_hash()
    assert a == parse_config({**base, "concurrency": 64, "move_timeout": 3, "provider_limits": {"x": 1}}).schedule_hash()
    assert a != parse_config({**base, "seed": 2}).schedule_hash()
    assert a != parse_config({**base, "policies": ["bot", {"name": "random", "spec": "random,seed=2"}]}).schedule_hash()


def test_the_shipped_demo_config_validates():
    config = load_config(ROOT / "examples" / "demo-league.yaml")
    assert len(config.games) == 3 and any(p.spec.startswith("local") for p in config.policies)
