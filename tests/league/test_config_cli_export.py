"""League config errors, the league CLI end to end, and the JSONL exports."""

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from arena.cli import app
from league.config import ConfigError, load_config

runner = CliRunner()

GOOD = """
name: small
matches_per_pair: 2
games:
  - id: tictactoe
  - id: kuhn_poker
policies:
  - {name: bot, spec: bot}
  - random
"""


@pytest.mark.parametrize(
    "text,expected",
    [
        ("games: [{id: tictactoe}]\npolicies: [bot, randm]", "policies[1].spec: unknown policy 'randm'; did you mean random?"),
        ("games: [{id: tictactoo}]\npolicies: [bot, random]", "games[0].id: unknown game 'tictactoo'; did you mean tictactoe"),
        ("games: [{id: tictactoe, players: 3}]\npolicies: [bot, random]", "games[0].id: tictactoe takes 2-2 players, not 3"),
        ("games: [{id: tictactoe}]\npolicies: [bot]", "policies: List should have at least 2 items"),
        ("games: [{id: tictactoe}]\npolicies: [bot, bot]", "policy names must be unique; repeated: bot"),
        ("games: [{id: tictactoe}]\npolicies: [bot, random]\nconcurency: 3", "concurency: Extra inputs are not permitted"),
        ("games: [{id: tictactoe}]\npolicies: [bot, random]\nscheduler: adaptive", "needs `budget`"),
        ("games: [{id: tictactoe\n", "not valid YAML"),
    ],
)
def test_config_errors_name_file_key_and_problem(tmp_path, text, expected):
    path = tmp_path / "league.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and expected in message and "\n" not in message




def test_league_cli_end_to_end(tmp_path):
    config = tmp_path / "league.yaml"
    config.write_text(GOOD)
    db = f"sqlite:///{tmp_path / 'l.db'}"
    run = runner.invoke(app, ["league", "run", str(config), "--db", db, "-q"])
    assert run.exit_code == 0, run.output
    assert "4 matches stored" in run.output  # 2 games x 1 pair x 2
    again = runner.invoke(app, ["league", "run", str(config), "--db", db, "-q"])
    assert "4 matches stored (0 played now" in again.output  # finished leagues are not replayed
    for by in ("trueskill", "elo", "bt"):
        board = runner.invoke(app, ["leaderboard", "--by", by, "--db", db], terminal_width=150)
        assert board.exit_code == 0 and "bot" in board.output and "rank" in board.output
    per_game = runner.invoke(app, ["leaderboard", "--game", "tictactoe", "--db", db])
    assert "tictactoe" in per_game.output
    status = runner.invoke(app, ["league", "status", "--db", db])
    assert "small" in status.output
    assert runner.invoke(app, ["league", "rerate", "--db", db]).exit_code == 0
    assert runner.invoke(app, ["policy", "list", "--db", db]).exit_code == 0
    out = tmp_path / "records.jsonl"
    assert runner.invoke(app, ["export", "--kind", "records", "--out", str(out), "--db", db]).exit_code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 4 and all(r["turns"] for r in rows)


def test_exports_are_in_trl_formats(tmp_path):
    config = tmp_path / "league.yaml"
    config.write_text(GOOD.replace("matches_per_pair: 2", "matches_per_pair: 20"))
    db = f"sqlite:///{tmp_path / 'l.db'}"
    assert runner.invoke(app, ["league", "run", str(config), "--db", db, "-q"]).exit_code == 0
    sft, dpo = tmp_path / "sft.jsonl", tmp_path / "dpo.jsonl"
    assert runner.invoke(app, ["export", "--kind", "sft", "--out", str(sft), "--db", db]).exit_code == 0
    assert runner.invoke(app, ["export", "--kind", "dpo", "--out", str(dpo), "--db", db]).exit_code == 0
    chats = [json.loads(line) for line in sft.read_text().splitlines()]
    assert chats and all([m["role"] for m in c["messages"]] == ["user", "assistant"] for c in chats)
    pairs = [json.loads(line) for line in dpo.read_text().splitlines()]
    assert pairs, "bots against random should give comparable states with different replies"
    for pair in pairs[:50]:
        assert pair["prompt"][0]["role"] == "user" and pair["chosen"][0]["content"] != pair["rejected"][0]["content"]


def test_cli_errors_are_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "arena.cli", "league", "run", str(tmp_path / "missing.yaml")], capture_output=True, text=True)
    assert result.returncode == 2 and result.stderr.strip().count("\n") == 0 and "no such file" in result.stderr
    result = subprocess.run([sys.executable, "-m", "arena.cli", "leaderboard", "--by", "glicko"], capture_output=True, text=True)
    assert result.returncode == 2 and "choose one of trueskill, elo, bt" in result.stderr
