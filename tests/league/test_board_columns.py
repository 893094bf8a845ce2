"""`arena leaderboard --columns standings|moves|all` and `arena export --kind leaderboard` on a store
whose per-move figures are known (tests/league/move_store.py): readable at 80 columns, numbers
never cut, long names folded whole, every figure defined under the table, the export under the
stable names of league.move_stats."""

import json
import re

import pytest
from typer.testing import CliRunner

from league.move_stats import COLUMNS, DEFINITIONS, MOVE_DEFINITION
from league.store import Store
from llm_arena_cli.app import app
from tests.league.move_store import EXPECTED, fill

runner = CliRunner()
LONG_NAME = "openai:gpt-4o-mini,reasoning_effort=low,sampler=vote:5,parser=fuzzy"


@pytest.fixture
def db(tmp_path):
    url = f"sqlite:///{tmp_path / 'moves.db'}"
    with Store(url) as store:
        fill(store)
    return url


def _board(db, *args, width=80):
    result = runner.invoke(app, ["leaderboard", "--db", db, "--league", "lab", *args], terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def _table(lines):
    """The table's lines: from the title to the first line after the rows' block."""
    end = next(i for i, line in enumerate(lines) if i > 2 and not line.startswith(" ") and not line.startswith("─"))
    return lines[:end]


def _row(lines, policy):
    """The cells of `policy`'s first table line (cells are two or more spaces apart)."""
    line = next(line for line in lines if re.match(rf"\s*\d+\s{{2}}{re.escape(policy)}(\s|$)", line))
    return re.split(r"\s{2,}", line.strip())


def test_standings_fit_80_columns_with_invalid_and_forfeit_rates(db):
    lines = _board(db)
    assert all(len(line.rstrip()) <= 80 for line in _table(lines))
    assert _row(lines, "thinker")[-2:] == ["75.0%", "50.0%"]  # 3 of 4 attempts invalid; 1 of 2 matches forfeited
    assert _row(lines, "legacy")[-2:] == ["50.0%", "50.0%"]
    assert _row(lines, "bot")[-2:] == ["0.0%", "0.0%"]
    text = "\n".join(lines)
    for name in ("invalid_rate", "forfeit_rate"):
        assert DEFINITIONS[name] in text


def test_moves_view_shows_tokens_with_reasoning_apart_cost_and_median(db):
    lines = _board(db, "--columns", "moves")
    assert all(len(line.rstrip()) <= 80 for line in _table(lines))
    header = next(line for line in lines if "policy" in line)
    assert re.split(r"\s{2,}", header.strip()) == ["rank", "policy", "prompt", "reasoning", "answer", "$/move", "$ total", "median s"]
    assert _row(lines, "thinker")[2:] == ["100", "20", "13", "0.0015", "0.003", "2.5"]
    assert _row(lines, "legacy")[2:] == ["50", "–", "–", "–", "–", "4.5"]  # an old-format store: unknown, not 0
    assert _row(lines, "bot")[2:] == ["–", "–", "–", "–", "–", "<0.01"]
    text = "\n".join(lines)
    assert MOVE_DEFINITION in text and DEFINITIONS["median_move_s"] in text and DEFINITIONS["reasoning_tokens_per_move"] in text
    assert "their generated tokens per move are in --columns all" in text  # legacy's turns predate the reasoning count


def test_all_columns_print_wide_and_whole(db):
    lines = _board(db, "--columns", "all")
    header = next(line for line in lines if "policy" in line)
    assert len(header.rstrip()) > 80 and "generated" in header and "score %" in header
    thinker = _row(lines, "thinker")
    assert thinker[-9:] == ["75.0%", "50.0%", "100", "20", "13", "33", "0.0015", "0.003", "2.5"]
    assert _row(lines, "legacy")[-6:-3] == ["–", "–", "10"]  # generated tokens known where the split is not


def test_a_long_name_folds_whole_and_the_numbers_stay_intact(tmp_path):
    url = f"sqlite:///{tmp_path / 'long.db'}"
    with Store(url) as store:
        fill(store, thinker=LONG_NAME)
    for view, tail in (("standings", ["75.0%", "50.0%"]), ("moves", ["100", "20", "13", "0.0015", "0.003", "2.5"])):
        lines = _table(_board(url, "--columns", view))
        assert all(len(line.rstrip()) <= 80 for line in lines)
        first = next(i for i, line in enumerate(lines) if re.match(r"\s*\d+\s{2}openai:", line))
        cells = re.split(r"\s{2,}", lines[first].strip())
        assert cells[-len(tail):] == tail
        pieces = [cells[1]]
        for line in lines[first + 1:]:
            if re.match(r"\s*\d+\s{2}", line) or not line.strip():
                break
            pieces.append(line.strip())
        assert "".join(pieces) == LONG_NAME


def test_a_bad_view_is_one_line(db):
    result = runner.invoke(app, ["leaderboard", "--db", db, "--columns", "wide"])
    assert result.exit_code == 2 and result.output.strip() == "error: --columns 'wide': choose one of standings, moves, all"


def test_export_leaderboard_rows_carry_the_stable_names(db, tmp_path):
    out = tmp_path / "board.jsonl"
    result = runner.invoke(app, ["export", "--kind", "leaderboard", "--by", "bt", "--league", "lab", "--db", db, "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = {row["policy"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert set(rows) == set(EXPECTED)
    for policy, expected in EXPECTED.items():
        row = rows[policy]
        assert set(COLUMNS) <= set(row) and row["system"] == "bt" and row["game"] == ""
        assert {k: row[k] for k in expected if expected[k] is None or isinstance(expected[k], int)} == \
               {k: v for k, v in expected.items() if v is None or isinstance(v, int)}
        assert row["median_move_s"] == pytest.approx(expected["median_move_s"], rel=1e-12)  # a mean of two float64 values
    assert [rows[p]["rank"] >= 1 and rows[p]["lo"] <= rows[p]["rating"] <= rows[p]["hi"] for p in rows] == [True] * 3


def test_export_by_needs_the_leaderboard_kind(db, tmp_path):
    result = runner.invoke(app, ["export", "--kind", "sft", "--by", "bt", "--db", db, "--out", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "--by needs --kind leaderboard (got --kind sft)" in result.output
