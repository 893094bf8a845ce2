"""`arena eval suite`: frozen suites played through the league runner, report cards that reproduce,
anchors that never move, and a killed evaluation that resumes to the same card."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from evaluation.report_card import without_timing
from evaluation.suites import SuiteError, evaluation_league, load_suite
from league.config import ConfigError, parse_config
from league.store import Store
from llm_arena_cli.app import app

runner = CliRunner()
pytestmark = pytest.mark.slow


def _evaluate(db: str, policy: str, tmp_path, *extra: str) -> dict:
    out = tmp_path / f"{policy}-{abs(hash(db))}.json"
    result = runner.invoke(app, ["eval", "suite", "-p", policy, "--quick", "--db", db, "--json", str(out), "-q", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def quick_cards(tmp_path_factory):
    """bot and random on --quick in one store, and both again in a fresh store."""
    tmp = tmp_path_factory.mktemp("eval")
    shared, fresh = f"sqlite:///{tmp / 'shared.db'}", f"sqlite:///{tmp / 'fresh.db'}"
    return {
        "tmp": tmp, "shared": shared,
        "bot": _evaluate(shared, "bot", tmp),
        "random": _evaluate(shared, "random", tmp),
        "bot_again": _evaluate(fresh, "bot", tmp),
        "random_again": _evaluate(fresh, "random", tmp),
    }


def test_quick_cards_order_the_bot_above_random(quick_cards):
    bot, rand = quick_cards["bot"], quick_cards["random"]
    assert bot["complete"] and rand["complete"]
    assert bot["matches"]["finished"] == bot["matches"]["planned"] == len(evaluation_league(load_suite("core-v1"), "bot", "bot", quick=True).matches)
    assert bot["overall"]["score"] > rand["overall"]["score"]
    assert bot["overall"]["invalid_rate"] == 0.0
    assert bot["rating"] and rand["rating"], "core-v1 ships frozen anchors, so every card has a rating"
    assert bot["rating"]["rating"] > rand["rating"]["rating"]
    assert bot["rating"]["comparisons"] > 0 and bot["rating"]["lo"] <= bot["rating"]["rating"] <= bot["rating"]["hi"]
    assert [g["game"] for g in bot["games"]] == load_suite("core-v1").quick.games


@pytest.mark.parametrize("policy", ["bot", "random"])
def test_the_same_seeds_reproduce_the_card_exactly(quick_cards, policy):
    """Same JSON, to the byte, in another store (latency aside)."""
    first, again = (json.dumps(without_timing(quick_cards[k]), sort_keys=True) for k in (policy, f"{policy}_again"))
    assert first == again


def test_a_quick_run_builds_no_reference_it_never_plays():
    """--quick plays the scripted references only, so it must not load the LLM reference's model."""
    suite = load_suite("core-v1")
    quick = evaluation_league(suite, "bot", "bot", quick=True)
    seated = {name for match in quick.matches for name in match.seats}
    assert {p.name for p in quick.policies} == seated == {"bot", *(suite.store_name(r) for r in suite.quick.references)}
    full = evaluation_league(suite, "bot", "bot")
    assert {p.name for p in full.policies} == {"bot", *(suite.store_name(r.name) for r in suite.references)}


def test_anchors_and_earlier_cards_do_not_move_when_another_policy_is_evaluated(quick_cards, tmp_path):
    shared = quick_cards["shared"]
    before = quick_cards["bot"]
    _evaluate(shared, "random,seed=7", tmp_path, "--name", "third")
    after = _evaluate(shared, "bot", tmp_path)  # complete: re-read from the store, nothing replayed
    assert without_timing(after) == without_timing(before)
    suite = load_suite("core-v1")
    assert set(suite.anchors()) == {r.name for r in suite.references}, "every reference of a released suite has an anchor"
    assert after["anchors"] == before["anchors"] == suite.anchors()
    assert before["rating"] is not None and after["rating"] == before["rating"]


def test_league_status_reads_the_stored_fixed_schedule(quick_cards):
    """The stored config keeps `matches[].key` (not taken for a secret), so it parses back and
    `arena league status` shows the planned count, not `open`."""
    store = Store(quick_cards["shared"])
    [row] = [r for r in store.leagues() if r.name == "eval core-v1 quick: bot"]
    store.close()
    stored = parse_config(dict(row.config), row.name)
    assert [m.key for m in stored.matches] == [m["key"] for m in evaluation_league(load_suite("core-v1"), "bot", "bot", quick=True).model_dump()["matches"]]
    result = runner.invoke(app, ["league", "status", "--db", quick_cards["shared"]])
    assert result.exit_code == 0, result.output
    planned = quick_cards["bot"]["matches"]["planned"]
    line = next(line for line in result.output.splitlines() if "quick: bot" in line)
    assert line.split()[-6:-4] == [str(planned), str(planned)], line  # planned, finished


def test_a_killed_evaluation_resumes_to_the_same_card(quick_cards, tmp_path):
    db = f"sqlite:///{tmp_path / 'killed.db'}"
    # kill -9 from inside the run, right after the 5th stored match, with others in flight
    script = textwrap.dedent(f"""
        import os, signal
        from evaluation.suite_evaluation import run_evaluation
        from league.store import Store
        from evaluation.suites import load_suite

        def on_finish(done):
            if done.finished >= 5:
                os.kill(os.getpid(), signal.SIGKILL)

        run_evaluation(Store({db!r}), load_suite("core-v1"), "bot", "bot", quick=True, concurrency=4, on_finish=on_finish)
    """)
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    league = Store(db)
    stored = league.count(league.league_id("eval core-v1 quick: bot"), "finished")
    league.close()
    assert 5 <= stored < quick_cards["bot"]["matches"]["planned"]
    resumed = _evaluate(db, "bot", tmp_path)
    assert without_timing(resumed) == without_timing(quick_cards["bot"])


def test_bad_input_is_one_line():
    for args, expected in [
        (["eval", "suite", "-p", "bot", "--suite", "core-v0"], "unknown suite 'core-v0'"),
        (["eval", "suite", "-p", "bott", "--quick"], "did you mean bot"),
        (["eval", "suite", "-p", "bot", "--name", "core-v1/bot"], "store name of a reference"),
    ]:
        result = subprocess.run([sys.executable, "-m", "llm_arena_cli", *args], capture_output=True, text=True)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1 and expected in lines[0], result.stderr


def test_suites_lists_games_references_and_anchors():
    result = runner.invoke(app, ["eval", "suites"])
    assert result.exit_code == 0, result.output
    for text in ("core-v1", "tictactoe", "liars_dice", "textarena:TicTacToe-v0", "smollm2", "--quick"):
        assert text in result.output


def test_the_markdown_card_has_a_plot(quick_cards, tmp_path):
    out = tmp_path / "card.md"
    result = runner.invoke(app, ["eval", "suite", "-p", "bot", "--quick", "--db", quick_cards["shared"], "--markdown", str(out), "-q"])
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert "| tictactoe |" in text and "![score per game" in text
    assert (tmp_path / "card.png").read_bytes()[:4] == b"\x89PNG"


def test_unknown_suite_and_fixed_schedule_errors():
    with pytest.raises(SuiteError, match="unknown suite"):
        load_suite("nope")
    base = {"name": "x", "scheduler": "fixed", "games": [{"id": "tictactoe"}], "policies": ["bot", "random"]}
    with pytest.raises(ConfigError, match="needs `matches`"):
        parse_config(base)
    with pytest.raises(ConfigError, match="unknown policy 'ghost'"):
        parse_config({**base, "matches": [{"key": "a", "game": "tictactoe", "seats": ["bot", "ghost"], "seed": 1}]})
    with pytest.raises(ConfigError, match="repeated: a"):
        parse_config({**base, "matches": [{"key": "a", "game": "tictactoe", "seats": ["bot", "random"], "seed": 1}] * 2})
