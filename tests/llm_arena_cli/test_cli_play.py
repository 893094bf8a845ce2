"""`arena play`, `arena replay` and their errors, through the real command line."""

import json
import re
import subprocess
import sys

import pexpect
import pytest
from typer.testing import CliRunner

from llm_arena_cli.app import app

runner = CliRunner()


def test_play_bot_vs_random_and_replay(tmp_path):
    out = tmp_path / "match.json"
    result = runner.invoke(app, ["play", "tictactoe", "-p", "bot", "-p", "random", "--seed", "1", "--save", str(out)])
    assert result.exit_code == 0, result.output
    assert "result" in result.output and "Winner" in result.output
    # the position the match ended in is shown, before the result
    assert result.output.index("final position (seat 0)") < result.output.index("tictactoe result")
    record = json.loads(out.read_text())
    assert record["status"] == "finished" and record["seed"] == 1
    replay = runner.invoke(app, ["replay", str(out)])
    assert replay.exit_code == 0 and "tictactoe" in replay.output and "Winner" in replay.output


@pytest.mark.parametrize(
    "args,expected",
    [
        (["play", "tictactoo", "-p", "bot", "-p", "random"], "did you mean tictactoe"),
        (["play", "tictactoe", "-p", "bott", "-p", "random"], "did you mean bot"),
        (["play", "tictactoe", "-p", "bot"], "takes 2 players, not 1"),
        (["play", "tictactoe", "-p", "random,foo=1", "-p", "bot"], "unknown parameter(s) foo"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, expected):
    result = subprocess.run([sys.executable, "-m", "llm_arena_cli", *args], capture_output=True, text=True)
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
    # JSON that is not a match record: one line naming what is missing, never a Python TypeError
    for text, expected in (('{"name": "x", "version": 1}', "not a match record (top level: missing game_id, match_id"),
                           ("[1, 2]", "a JSON object expected, not list"),
                           ('{"match_id": "m", "game_id": "g", "num_players": 2, "seed": 0, "policies": [], "specs": [], "turns": [{"x": 1}]}',
                            "not a match record (a turn: missing")):
        other = tmp_path / "other.json"
        other.write_text(text)
        result = runner.invoke(app, ["replay", str(other)])
        assert result.exit_code == 2 and expected in result.stderr, result.stderr
        assert "TypeError" not in result.stderr and result.stderr.strip().count("\n") == 0


def test_human_vs_bot_in_a_terminal():
    """A person plays Tic-Tac-Toe against the minimax bot through a real pseudo-terminal."""
    child = pexpect.spawn(sys.executable, ["-m", "llm_arena_cli", "play", "tictactoe", "-p", "human", "-p", "bot", "--seed", "2"],
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


def test_ctrl_c_at_the_human_prompt_ends_the_match_at_once():
    child = pexpect.spawn(sys.executable, ["-m", "llm_arena_cli", "play", "tictactoe", "-p", "human", "-p", "bot"],
                          encoding="utf-8", timeout=30, dimensions=(50, 120))
    child.expect("your move>")
    child.sendcontrol("c")
    child.expect("interrupted; no result", timeout=10)  # not after the next Enter: at once
    child.expect(pexpect.EOF, timeout=10)
    child.close()
    assert child.exitstatus == 130


def test_games_all_at_80_columns_breaks_names_only_between_words():
    from games.registry import list_games

    result = runner.invoke(app, ["games", "--all"], terminal_width=80)
    assert result.exit_code == 0, result.output
    names: dict[str, list[str]] = {}
    current = ""
    for line in result.output.splitlines():
        cells = line.split("│")
        if len(cells) < 4:
            continue
        current = cells[1].strip() or current
        names.setdefault(current, []).extend(cells[2].split())
    words = {info.id: re.sub(r"(?<=[a-z])(?=[A-Z])", " ", info.name).split() for info in list_games(include_unavailable=True)}
    assert len(names) >= 80
    for game_id, shown in names.items():
        assert shown == words[game_id], (game_id, shown)  # every word whole


def test_games_table_keeps_names_readable_in_80_columns():
    # TextArena's long ids take half the width; the names must not be squeezed to a letter a line.
    result = runner.invoke(app, ["games", "--source", "native"], terminal_width=80)
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line.split("│")[2:4] for line in result.output.splitlines() if line.startswith("│") and line.split("│")[1].strip()}
    assert rows["connect_four"][0].strip() == "Connect Four" and rows["sealed_bid_auction"][1].strip() == "3-6*"
    assert "* players choose their moves simultaneously" in result.output


LEAGUE = """name: before-play
seed: 3
matches_per_pair: 1
games: [{id: tictactoe}, {id: kuhn_poker}]
policies: [bot, random]
"""


def test_play_keeps_its_result_after_the_commands_run_before_it_in_one_process(tmp_path):
    """Issue 18, item 10: in one full `make test` the first test above lost its result line
    while it passes alone. The commands the suite runs in this process before it, each through
    its own CliRunner (a league with live standings, the ratings, exploitability, the games
    table, a replay), then `play`: its result must be in its own output, and nothing of the
    earlier commands in it (every console resolves the stream of the moment when it prints)."""
    config = tmp_path / "league.yaml"
    config.write_text(LEAGUE)
    db = f"sqlite:///{tmp_path / 'l.db'}"
    saved = tmp_path / "match.json"
    before = [
        ["league", "run", str(config), "--db", db],  # not -q: the live standings (rich Live) run
        ["leaderboard", "--by", "bt", "--db", db],
        ["leaderboard", "--by", "trueskill", "--db", db],
        ["eval", "exploitability", "--game", "kuhn_poker", "--policy", "random", "--json"],
        ["games"],
        ["play", "nim", "-p", "bot", "-p", "random", "--seed", "2", "--save", str(saved)],
        ["replay", str(saved)],
    ]
    for args in before:
        result = runner.invoke(app, args, terminal_width=120)
        assert result.exit_code == 0, (args, result.output)
    result = runner.invoke(app, ["play", "tictactoe", "-p", "bot", "-p", "random", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "tictactoe result" in result.output and "Winner: bot (seat 0)" in result.output, result.output
    assert result.output.index("final position (seat 0)") < result.output.index("tictactoe result")
    assert "Leaderboard" not in result.output and "nim" not in result.output  # no earlier command's text


def test_no_console_of_ours_is_bound_to_a_stream():
    """A rich Console given `file=sys.stdout` keeps the stream of the moment it was made (a
    CliRunner's, pytest's), and keeps writing there after that stream is swapped out: output
    vanishes in whatever runs later in the process. Ours are made with file=None, so each print
    looks up sys.stdout/sys.stderr afresh. Checks every module-level Console of our packages
    once every command module is imported."""
    import importlib
    import pkgutil

    from rich.console import Console

    import llm_arena_cli

    for info in pkgutil.iter_modules(llm_arena_cli.__path__, "llm_arena_cli."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    ours = ("arena", "games", "league", "evaluation", "web", "trainer", "serve_env", "interop", "llm_arena_cli")
    consoles = {
        f"{name}.{attr}": value
        for name, module in list(sys.modules.items())
        if name.split(".")[0] in ours
        for attr, value in list(vars(module).items())
        if isinstance(value, Console)
    }
    assert len(consoles) >= 4, sorted(consoles)  # app, league, suite and trainer consoles at least
    bound = sorted(name for name, console in consoles.items() if console._file is not None)
    assert not bound, f"consoles bound to a stream at import: {bound}"
