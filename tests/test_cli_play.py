"""`arena play`, `arena replay` and their errors, through the real command line."""

import json
import subprocess
import sys

import pexpect
import pytest
from typer.testing import CliRunner

from arena.cli import app

runner = CliRunner()


def test_play_bot_vs_random_and_replay(tmp_path):
    out = tmp_path / "match.json"
    result = runner.invoke(app, ["play", "tictactoe", "-p", "bot", "-p", "random", "--seed", "1", "--save", str(out)])
    assert result.exit_code == 0, result.output
    assert "result" in result.output and "Winner" in result.output
    record = json.loads(out.read_text())
    assert record["status"] == "finished" and record["seed"] == 1
    replay = runner.invoke(app, ["replay", str(out)])
    assert replay.exit_code == 0 and "tictactoe" in replay.output and "Winner" in replay.output


@pytest.mark.parametrize(
    "args,expected",
    [
        (["play", "tictactoo", "-p", "bot", "-p", "random"], "did you mean tictactoe"),
        (["play", "tictactoe", "-p", "bott", "-p", "random"], "did you mean bot"),
        (["play", "tictactoe", "-p", "bot"], "takes 2-2 players, not 1"),
        (["play", "tictactoe", "-p", "random,foo=1", "-p", "bot"], "unknown parameter(s) foo"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, expected):
    result = subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True)
    assert result.returncode == 2, result.stderr
    lines = [l for l in result.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and expected in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_replay_of_a_missing_or_broken_file(tmp_path):
    assert runner.invoke(app, ["replay", str(tmp_path / "nope.json")]).exit_code == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = runner.invoke(app, ["replay", str(broken)])
    assert result.exit_code == 2


def test_human_vs_bot_in_a_terminal():
    """A person plays Tic-Tac-Toe against the minimax bot through a real pseudo-terminal."""
    child = pexpect.spawn(sys.executable, ["-m", "arena.cli", "play", "tictactoe", "-p", "human", "-p", "bot", "--seed", "2"],
                          encoding="utf-8", timeout=30, dimensions=(50, 120))
    child.expect("your move>")
    child.sendline("banana")  # rejected locally, with a hint
    child.expect("not a legal move")
    child.sendline("4")
    # keep playing the lowest legal cell until the game ends
    while True:
        index = child.expect(["Legal moves: ([0-9, ]+)", "result"])
        if index == 1:
            break
        legal = child.match.group(1).split(",")
        child.expect("your move>")
        child.sendline(legal[0].strip())
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_games_table_keeps_names_readable_in_80_columns():
    # TextArena's long ids take half the width; the names must not be squeezed to a letter a line.
    result = runner.invoke(app, ["games", "--source", "native"], terminal_width=80)
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[2:4] for line in result.output.splitlines() if line.startswith("│") and line.split("│")[1].strip()}
    assert rows["connect_four"][0].strip() == "Connect Four" and rows["sealed_bid_auction"][1].strip() == "3-6*"
    assert "* players choose their moves simultaneously" in result.output
