"""`arena ablate` end to end with scripted policies: a known difference found and the null not, the
null a real second policy row with draws of its own, files written, an interrupted ablation resumed
to the very report of an uninterrupted one, and mistakes refused in one line."""

from __future__ import annotations

import asyncio
import json
import shlex

import pytest
from typer.testing import CliRunner

from evaluation.cli.ablate import _resume_command
from evaluation.ablation_plan import parse_plan
from league.runner import run_league
from league.store import Store
from llm_arena_cli.app import app

runner = CliRunner()
FLAGS = ["--policy", "random", "--variant", "bot", "--variant", "seeded=random,seed=5", "--game", "tictactoe", "--pairs", "8"]


def ablate(db: str, *extra: str, flags: list[str] = FLAGS) -> tuple[int, str]:
    result = runner.invoke(app, ["ablate", *flags, "--db", db, *extra])
    return result.exit_code, result.output


def without_latency(report: dict) -> dict:
    return {**report, "policies": [{k: v for k, v in row.items() if k != "median_move_s"} for row in report["policies"]]}


def test_a_known_difference_is_supported_and_the_null_is_not(tmp_path):
    db = f"sqlite:///{tmp_path / 'a.db'}"
    code, output = ablate(db, "--json", str(tmp_path / "r.json"), "-q")
    assert code == 0, output
    report = json.loads((tmp_path / "r.json").read_text())
    by = {c["policy"]: c for c in report["comparisons"]}
    assert by["bot"]["significant"] and by["bot"]["diff"] > 0.5 and by["bot"]["pairs"] == 8
    assert not by["random (null)"]["significant"]
    assert by["random (null)"]["decisive_pairs"] > 0, "the null's own draws make its pairs differ"
    assert report["complete"] and report["matches"]["finished"] == report["matches"]["planned"] == 8 * 3 * 2
    assert "bot scores higher than random" in output
    with Store(db) as store:
        rows = {p.name: p.spec for p in store.policies()}
    assert rows["random"] == "random" and rows["random (null)"].startswith("random,seed=") and rows["bot"] == "bot"


def test_the_terminal_table_fits_80_columns(tmp_path):
    code, output = ablate(f"sqlite:///{tmp_path / 'a.db'}", "-q")
    assert code == 0, output
    table = output.split("diff: the policy's points")[0]
    assert "Holm p" in table and max(len(line) for line in table.splitlines()) <= 80


def test_an_interrupted_ablation_resumes_to_the_report_of_an_uninterrupted_one(tmp_path):
    interrupted, fresh = f"sqlite:///{tmp_path / 'i.db'}", f"sqlite:///{tmp_path / 'f.db'}"
    plan = parse_plan({"baseline": "random", "variants": ["bot", "seeded=random,seed=5"], "games": ["tictactoe"], "pairs": 8}, "t", flags=True)
    config = plan.league_config().model_copy(update={"concurrency": 2})

    async def stopped_early(store):
        stop = asyncio.Event()
        return await run_league(config, store, stop=stop, on_finish=lambda done: done.finished >= 5 and stop.set())

    with Store(interrupted) as store:
        summary = asyncio.run(stopped_early(store))
        assert summary.interrupted and summary.finished < len(config.matches)
    code, output = ablate(interrupted, "--json", str(tmp_path / "resumed.json"), "-q")
    assert code == 0, output
    code, output = ablate(fresh, "--json", str(tmp_path / "fresh.json"), "-q")
    assert code == 0, output
    with Store(interrupted) as store:
        assert store.count(store.league_id(config.name), "finished") == len(config.matches), "nothing lost, nothing twice"
    resumed, whole = (without_latency(json.loads((tmp_path / f"{n}.json").read_text())) for n in ("resumed", "fresh"))
    assert resumed == whole


def test_a_complete_ablation_plays_nothing_more_and_reports_the_same(tmp_path):
    db = f"sqlite:///{tmp_path / 'a.db'}"
    assert ablate(db, "--json", str(tmp_path / "1.json"), "-q")[0] == 0
    code, output = ablate(db, "--report", "--json", str(tmp_path / "2.json"))
    assert code == 0, output
    first, second = (without_latency(json.loads((tmp_path / f"{n}.json").read_text())) for n in (1, 2))
    assert first == second


def test_a_plan_file(tmp_path):
    plan = tmp_path / "ablate.yaml"
    plan.write_text("name: scripted\nbaseline: random\nvariants: {bot: bot}\nnull_variant: false\ngames: [nim]\npairs: 3\n")
    result = runner.invoke(app, ["ablate", str(plan), "--db", f"sqlite:///{tmp_path / 'a.db'}", "--json", str(tmp_path / "r.json"), "-q"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["league"] == "ablate scripted" and [c["policy"] for c in report["comparisons"]] == ["bot"]


@pytest.mark.parametrize("args, message", [
    (["--policy", "random", "--game", "tictactoe"], "arena ablate: --pairs: Field required"),
    (["--variant", "bot"], "give an ablation file or the plan in flags"),
    (["--policy", "random", "--variant", "x=random,foo=1", "--game", "tictactoe", "--pairs", "2"], "policy 'x': cannot build 'random,foo=1'"),
])
def test_mistakes_are_one_line(tmp_path, args, message):
    result = runner.invoke(app, ["ablate", *args, "--db", f"sqlite:///{tmp_path / 'a.db'}", "-q"])
    assert result.exit_code == 2 and message in result.output, result.output


def test_a_file_and_plan_flags_together_are_refused(tmp_path):
    result = runner.invoke(app, ["ablate", str(tmp_path / "a.yaml"), "--pairs", "3"])
    assert result.exit_code == 2 and "--pairs: the plan is in" in result.output


def test_a_changed_plan_under_the_same_name_is_refused(tmp_path):
    db = f"sqlite:///{tmp_path / 'a.db'}"
    assert ablate(db, "-q", flags=FLAGS[:-1] + ["2"])[0] == 0
    code, output = ablate(db, "-q", flags=FLAGS[:-1] + ["3"])
    assert code == 2 and "give this one another --name" in output


def test_report_needs_a_stored_ablation(tmp_path):
    code, output = ablate(f"sqlite:///{tmp_path / 'missing.db'}", "--report")
    assert code == 2 and "no league store" in output


def test_the_resume_command_replays_the_same_plan():
    flags = {"baseline": "local,max_new_tokens=8", "variants": ["vote 3=local,max_new_tokens=8,sampler=vote:3"], "games": ["tictactoe"],
             "pairs": 4, "seed": 7, "name": None, "null_variant": False, "all_pairs": True}
    words = shlex.split(_resume_command(None, flags, "sqlite:///a.db"))
    assert words[:2] == ["arena", "ablate"] and words[-2:] == ["--db", "sqlite:///a.db"]
    assert "--no-null" in words and "--all-pairs" in words and "vote 3=local,max_new_tokens=8,sampler=vote:3" in words


def test_an_interrupted_run_reports_the_stored_pairs_and_how_to_resume(tmp_path, monkeypatch):
    """A stop after a few matches (what Ctrl-C sets): the report of what is stored, the command that
    resumes, exit 130; the command it prints finishes the ablation."""
    import league.runner

    played = league.runner.run_league

    async def stopped_after_four(config, store, **kwargs):
        stop = asyncio.Event()
        return await played(config, store, **{**kwargs, "stop": stop, "on_finish": lambda done: done.finished >= 4 and stop.set()})

    db = f"sqlite:///{tmp_path / 'a.db'}"
    monkeypatch.setattr(league.runner, "run_league", stopped_after_four)
    code, output = ablate(db, "--concurrency", "1", "-q")
    assert code == 130, output
    assert "incomplete:" in output and "Resume with: arena ablate --policy random --variant bot" in output
    resume = shlex.split(output.split("Resume with: ")[1].strip())
    monkeypatch.setattr(league.runner, "run_league", played)
    result = runner.invoke(app, [*resume[1:], "--json", str(tmp_path / "r.json"), "-q"])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r.json").read_text())["complete"]
