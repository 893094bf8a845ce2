"""`arena ablate` on the shipped model: one sample per move against a majority vote over three, and
the null variant, on Tic-Tac-Toe. Measured 2026-11-25 on 2 shared CPU cores: 69 s wall, 25 s CPU,
for this one pair of each comparison (4 matches in flight together on the hf engine)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from llm_arena_cli.app import app

pytestmark = pytest.mark.slow
BASELINE = "local,max_new_tokens=8"


def test_a_sampler_ablation_of_the_shipped_model(tmp_path):
    out = tmp_path / "report.json"
    result = CliRunner().invoke(app, [
        "ablate", "--policy", BASELINE, "--variant", f"vote3={BASELINE},sampler=vote:3", "--game", "tictactoe", "--pairs", "1",
        "--db", f"sqlite:///{tmp_path / 'a.db'}", "--json", str(out), "-q",
    ])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["complete"] and report["matches"]["finished"] == 4
    rows = {row["name"]: row for row in report["policies"]}
    assert set(rows) == {BASELINE, f"{BASELINE} (null)", "vote3"}
    assert rows[f"{BASELINE} (null)"]["spec"].startswith(f"{BASELINE},seed=")
    assert all(row["engine"] == "hf" for row in rows.values()), "the suite pins the hf engine (tests/conftest.py)"
    # A vote asks three times per move: about three times the tokens of one sample.
    for figure in ("prompt_tokens_per_move", "completion_tokens_per_move"):
        assert rows["vote3"][figure] > 2 * rows[BASELINE][figure], figure
    assert [c["pairs"] for c in report["comparisons"]] == [1, 1]
