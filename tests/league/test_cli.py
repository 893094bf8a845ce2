"""The league commands end to end through the real `arena` app, and their one-line errors."""

import json
import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from league.store import Store
from llm_arena_cli.app import app

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


def _invoke(*args):
    return runner.invoke(app, list(args), terminal_width=160)


@pytest.fixture
def league(tmp_path):
    config = tmp_path / "league.yaml"
    config.write_text(GOOD)
    db = f"sqlite:///{tmp_path / 'l.db'}"
    run = _invoke("league", "run", str(config), "--db", db)
    assert run.exit_code == 0, run.output
    return config, db, run.output


def test_run_resume_status_rerate(league):
    config, db, output = league
    assert "small: 4 matches stored (4 played now)" in output and "Leaderboard" in output
    assert "\nsmall: 4 matches stored" in output  # on a line of its own, not glued to the standings' border
    again = _invoke("league", "run", str(config), "--db", db, "-q")
    assert "4 matches stored (0 played now" in again.output  # finished leagues are not replayed
    status = _invoke("league", "status", "--db", db)
    assert "small" in status.output and status.exit_code == 0
    line = next(l for l in status.output.splitlines() if "small" in l)
    assert line.split()[1:] == ["4", "4", "0", "0", "0", "0"]  # planned, finished, running, scheduled, abandoned, aborted
    rerate = _invoke("league", "rerate", "--db", db)
    assert rerate.exit_code == 0 and "small: 4 matches" in rerate.output


@pytest.mark.parametrize("by", ["trueskill", "elo", "bt"])
def test_leaderboard_systems_show_ci_and_rank(league, by):
    _, db, _ = league
    board = _invoke("leaderboard", "--by", by, "--db", db)
    assert board.exit_code == 0, board.output
    assert "rank" in board.output and "bot" in board.output
    assert ("95% CI" in board.output) if by != "elo" else ("Elo has no interval" in board.output)
    per_game = _invoke("leaderboard", "--game", "tictactoe", "--by", by, "--db", db, "--league", "small")
    assert "tictactoe" in per_game.output and per_game.exit_code == 0


def test_policy_add_list_remove(tmp_path):
    db = f"sqlite:///{tmp_path / 'p.db'}"
    added = _invoke("policy", "add", "local,temperature=0.3", "--name", "smol-cold", "--meta", "note=baseline", "--meta", "api_key=sk-x", "--db", db)
    assert added.exit_code == 0, added.output
    listing = _invoke("policy", "list", "--db", db)
    assert "smol-cold" in listing.output and "note=baseline" in listing.output and "sk-x" not in listing.output
    clash = _invoke("policy", "add", "random", "--name", "smol-cold", "--db", db)
    assert clash.exit_code == 2 and "already registered" in clash.output
    typo = _invoke("policy", "add", "opnai:gpt-4o", "--db", db)
    assert typo.exit_code == 2 and "did you mean openai?" in typo.output
    assert _invoke("policy", "remove", "smol-cold", "--db", db).exit_code == 0
    assert _invoke("policy", "remove", "smol-cold", "--db", db).exit_code == 2


def test_export_kinds(league, tmp_path):
    _, db, _ = league
    for kind in ("records", "sft", "dpo", "battles"):
        out = tmp_path / f"{kind}.jsonl"
        result = _invoke("export", "--kind", kind, "--out", str(out), "--db", db)
        assert result.exit_code == 0 and f"{kind} rows" in result.output, result.output
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["turns"] and r["outcome"] for r in rows)
    chats = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    assert chats and all(c["messages"][-1]["role"] == "assistant" for c in chats)
    battles = [json.loads(line) for line in (tmp_path / "battles.jsonl").read_text().splitlines()]
    assert len(battles) == 4 and {b["match_id"] for b in battles} == {r["match_id"] for r in rows}
    assert all({b["model_a"], b["model_b"]} == {"bot", "random"} and b["winner"] in ("model_a", "model_b", "tie") for b in battles)


def test_leaderboard_bt_interval_and_pooling_choices(league):
    _, db, _ = league
    for ci, pooling, note in (("sandwich", "games", "sandwich (robust)"), ("bootstrap", "matches", "every match weighted once")):
        board = _invoke("leaderboard", "--by", "bt", "--ci", ci, "--pooling", pooling, "--db", db)
        assert board.exit_code == 0 and note in board.output and "bot" in board.output, board.output


def test_every_command_has_help_with_an_example():
    for command in (["league", "run"], ["league", "status"], ["league", "rerate"], ["leaderboard"], ["policy", "add"],
                    ["policy", "list"], ["policy", "remove"], ["export"]):
        result = _invoke(*command, "--help")
        assert result.exit_code == 0 and "Example: arena" in result.output, command


def test_errors_are_one_line_with_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("games: [{id: tictactoe}]\npolicies: [bot, random, 'opnai:gpt-4o']\n")
    # The real process once: stderr holds exactly one line.
    result = subprocess.run([sys.executable, "-m", "llm_arena_cli", "league", "run", str(bad)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stderr.strip() == f"error: {bad}: policies[2].spec: unknown policy 'opnai:gpt-4o'; did you mean openai?"
    db = f"sqlite:///{tmp_path / 'x.db'}"
    Store(db).close()  # an empty store: the checks below are about the arguments
    cases = [
        (["league", "run", str(tmp_path / "missing.yaml")], "no such file"),
        (["leaderboard", "--by", "glicko", "--db", db], "choose one of trueskill, elo, bt"),
        (["leaderboard", "--game", "chess", "--db", db], "--game 'chess': no finished matches"),
        (["leaderboard", "--league", "nope", "--db", db], "no league named 'nope'"),
        (["leaderboard", "--db", "postgresql+psycopg://u:hunter2@127.0.0.1:1/x"], "cannot open the league store"),
        (["league", "run", str(bad), "--executor", "nonsense"], "--executor 'nonsense'"),
        (["league", "run", str(bad), "--ray-address", "auto"], "--ray-address needs --executor ray"),
        (["leaderboard", "--by", "bt", "--ci", "laplace", "--db", db], "--ci 'laplace': choose one of bootstrap, sandwich"),
        (["leaderboard", "--by", "bt", "--pooling", "seats", "--db", db], "--pooling 'seats': choose one of games, matches"),
        (["leaderboard", "--by", "elo", "--ci", "sandwich", "--db", db], "apply to --by bt only"),
        (["export", "--kind", "ppo", "--out", str(tmp_path / "x.jsonl"), "--db", db], "choose one of records, sft, dpo"),
        (["export", "--out", str(tmp_path / "no" / "x.jsonl"), "--db", db], "does not exist"),
    ]
    for args, expected in cases:
        result = _invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert expected in result.stderr and result.stderr.strip().count("\n") == 0, (args, result.stderr)
        assert "hunter2" not in result.stderr


def test_read_only_commands_refuse_a_store_that_does_not_exist(tmp_path):
    typo = tmp_path / "fresh.db"
    db = f"sqlite:///{typo}"
    for args in (["leaderboard"], ["leaderboard", "--by", "bt"], ["league", "status"], ["league", "rerate"], ["policy", "list"],
                 ["policy", "remove", "bot"], ["export", "--out", str(tmp_path / "x.jsonl")]):
        result = _invoke(*args, "--db", db)
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.strip() == f"error: no league store at {db} (check --db; `arena league run CONFIG --db {db}` starts one)"
        assert not typo.exists(), args  # nothing was created


@pytest.mark.slow
def test_ctrl_c_during_the_final_rerate_says_nothing_was_lost_and_a_rerun_rerates(tmp_path, monkeypatch):
    import league.snapshots
    from league.store import Store

    config = tmp_path / "league.yaml"
    config.write_text(GOOD)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    real_rerate = league.snapshots.rerate

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C after every match is stored, before the snapshots are swapped

    monkeypatch.setattr(league.snapshots, "rerate", interrupted)
    first = _invoke("league", "run", str(config), "--db", db, "-q")
    assert first.exit_code == 130
    assert "interrupted; every finished match is stored and nothing was lost. Resume with: arena league run" in first.output
    store = Store(db)
    assert store.status_counts(store.league_id("small")) == {"finished": 4}
    assert store.snapshots(store.league_id("small"), system="bt") == []  # the live curves have no Bradley-Terry rows
    monkeypatch.setattr(league.snapshots, "rerate", real_rerate)
    rerun = _invoke("league", "run", str(config), "--db", db, "-q")
    assert rerun.exit_code == 0 and "4 matches stored (0 played now)" in rerun.output
    assert store.snapshots(store.league_id("small"), system="bt")  # only the full recompute writes them


def test_ctrl_c_abandons_in_flight_and_says_how_to_resume(tmp_path):
    import signal
    import time

    from league.store import Store

    config = tmp_path / "league.yaml"
    config.write_text("name: stop\nmatches_per_pair: 4\nconcurrency: 4\ngrace_seconds: 0\n"
                      "games: [{id: connect_four}]\npolicies: [bot, {name: bot-b, spec: bot}, random]\n")
    db = f"sqlite:///{tmp_path / 's.db'}"
    proc = subprocess.Popen([sys.executable, "-m", "llm_arena_cli", "league", "run", str(config), "--db", db, "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    store = Store(db)
    deadline = time.monotonic() + 60
    while store.count(None, "finished") < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Resume with: arena league run" in stderr and stderr.strip().count("\n") == 0
    counts = store.status_counts(store.league_id("stop"))
    assert counts.get("running", 0) == 0 and counts["finished"] < 12  # nothing left looking alive
    rerun = _invoke("league", "run", str(config), "--db", db, "-q")
    assert rerun.exit_code == 0 and "12 matches stored" in rerun.output
    assert store.status_counts(store.league_id("stop")) == {"finished": 12}


def test_trueskill_shows_mu_with_its_own_interval_and_explains_shared_ranks(league):
    _, db, _ = league
    board = _invoke("leaderboard", "--by", "trueskill", "--db", db)
    lines = board.output.splitlines()
    header = next(i for i, line in enumerate(lines) if "policy" in line)
    assert re.split(r"\s{2,}", lines[header - 1].strip()) == ["95% CI", "mu - 3"]  # two-line headers: "95% CI / of mu"
    assert re.split(r"\s{2,}", lines[header].strip())[:5] == ["rank", "policy", "mu", "of mu", "sigma"]
    for line in lines:
        if re.match(r"\s*\d+\s{2}bot\s", line):
            cells = re.split(r"\s{2,}", line.strip())
            mu, (lo, hi), conservative = float(cells[2]), map(float, cells[3].split(" .. ")), float(cells[4])
            assert lo <= mu <= hi and conservative < lo  # mu sits inside its interval; mu - 3 sigma is its own number
    assert "rank 1 is shared by" in board.output and "95% CIs overlap" in board.output  # 2 matches per game: no separation


def test_bt_says_why_an_interval_is_missing_and_is_the_same_on_every_run(league):
    _, db, _ = league
    off = _invoke("leaderboard", "--by", "bt", "--bootstrap", "0", "--db", db)
    assert "not computed" in off.output and "the bootstrap was switched off (--bootstrap 0)" in off.output
    assert "bootstrap resamples" not in off.output  # the footer no longer promises what is not shown
    runs = [
        subprocess.run([sys.executable, "-m", "llm_arena_cli", "leaderboard", "--by", "bt", "--db", db], capture_output=True, text=True,
                       env={**os.environ, "PYTHONHASHSEED": str(seed), "COLUMNS": "160"}, timeout=120).stdout
        for seed in (1, 2)
    ]
    assert runs[0] == runs[1] and " .. " in runs[0]  # the bootstrap is seeded: same store, same intervals
