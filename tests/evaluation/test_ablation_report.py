"""The ablation report on constructed match logs: pairs looked up by the plan (an aborted or missing
match leaves its pair out), differences and W/D/L per pair, Holm across the variants but not the
null, verdicts in words, and markdown that keeps a user's `|` out of the table's structure."""

from __future__ import annotations

import pytest

from arena.match import MatchRecord
from evaluation.ablation_files import markdown, write_markdown
from evaluation.ablation_plan import parse_plan
from evaluation.ablation_report import ablation_report, collect_pairs
from evaluation.paired_tests import holm

PLAN = parse_plan({"baseline": "base=random", "variants": {"v": "bot", "w": "random,seed=9"}, "games": "tictactoe", "pairs": 8}, "test")


def record(plan, pair: int, seats: tuple[str, str], ranks: tuple[int, int] | None) -> MatchRecord:
    seed = plan.chance_seed("tictactoe", pair)
    return MatchRecord(match_id=f"{pair}{seats}", game_id="tictactoe", num_players=2, seed=seed, policies=list(seats), specs=["x", "y"],
                       outcome=None if ranks is None else {"ranks": list(ranks)}, status="finished" if ranks else "aborted")


WIN, LOSS, DRAW = (1, 2), (2, 1), (1, 1)


def pair_records(plan, pair, policy, against, first, second):
    """The pair's two matches: `first` is the result with `policy` in seat 0, `second` with it in seat 1 (ranks by seat)."""
    return [record(plan, pair, (policy, against), first), record(plan, pair, (against, policy), second)]


def test_pairs_are_the_two_seat_orders_of_one_chance_seed():
    records = (
        pair_records(PLAN, 0, "v", "base", WIN, LOSS)  # v wins both seats: +1
        + pair_records(PLAN, 1, "v", "base", WIN, WIN)  # v wins as seat 0, loses as seat 1: 0
        + pair_records(PLAN, 2, "v", "base", DRAW, LOSS)  # draw, win: +0.5
        + pair_records(PLAN, 3, "v", "base", WIN, None)  # aborted: left out, counted
        + pair_records(PLAN, 4, "v", "base", WIN, LOSS)[:1]  # half played: left out
    )
    pairs = collect_pairs(PLAN, records)
    tally = pairs[("v", "base")]["tictactoe"]
    assert tally.differences == [1.0, 0.0, 0.5]
    assert tally.aborted == 1
    assert (tally.results.wins, tally.results.draws, tally.results.losses) == (4, 1, 1)
    assert pairs[("w", "base")]["tictactoe"].differences == []


def test_holm_is_across_the_variants_and_the_null_is_judged_alone():
    records = []
    for pair in range(8):
        records += pair_records(PLAN, pair, "v", "base", WIN, LOSS)  # 8 of 8 pairs one way: p = 2/256
        records += pair_records(PLAN, pair, "w", "base", WIN, LOSS if pair < 4 else WIN)  # 4 decisive of 8: p = 2/16
        records += pair_records(PLAN, pair, "base (null)", "base", WIN if pair < 5 else LOSS, LOSS)  # 5 of 8: p = 2/32
    report = ablation_report(PLAN, records, planned_matches=len(PLAN.league_config().matches))
    by = {c["policy"]: c for c in report["comparisons"]}
    # The report keeps 6 significant digits of a p-value.
    assert by["v"]["p_value"] == pytest.approx(2 / 256, rel=1e-6) and by["w"]["p_value"] == pytest.approx(2 / 16, rel=1e-6)
    assert [by["v"]["p_holm"], by["w"]["p_holm"]] == pytest.approx(holm([2 / 256, 2 / 16]), rel=1e-6)
    assert by["v"]["significant"] and not by["w"]["significant"]
    null = by["base (null)"]
    assert null["p_holm"] is None and null["p_value"] == pytest.approx(2 / 32, rel=1e-6)
    assert not null["significant"], "0.0625 unadjusted: not below alpha"
    assert by["v"]["verdict"].startswith("v scores higher than base: +1.00 points per game") and "support a difference" in by["v"]["verdict"]
    assert "do not support a difference" in by["w"]["verdict"]
    assert "no significant difference, as a copy should show" in null["verdict"]
    assert report["complete"] and report["matches"] == {"planned": 48, "finished": 48, "aborted": 0}


def test_a_significant_null_is_a_warning():
    records = []
    for pair in range(6):
        records += pair_records(PLAN, pair, "base (null)", "base", WIN, LOSS)
    null = ablation_report(PLAN, records, planned_matches=48)["comparisons"][-1]
    assert null["significant"] and null["verdict"].startswith("warning: base (null) vs base")


def test_a_null_whose_pairs_all_tie_says_the_baseline_shows_no_noise():
    records = [r for pair in range(3) for r in pair_records(PLAN, pair, "base (null)", "base", DRAW, DRAW)]
    report = ablation_report(PLAN, records, planned_matches=48)
    assert "every pair came out even" in report["comparisons"][-1]["verdict"] and "shows no sampling noise" in report["comparisons"][-1]["verdict"]
    assert not report["complete"]
    assert report["comparisons"][0]["verdict"] == "v vs base: no complete pair yet."


def test_too_few_decisive_pairs_say_so():
    records = [r for pair in range(3) for r in pair_records(PLAN, pair, "v", "base", WIN, LOSS)]
    verdict = ablation_report(PLAN, records, planned_matches=48)["comparisons"][0]["verdict"]
    assert "3 decisive pairs cannot give p below 0.25: play more pairs" in verdict


def test_markdown_escapes_a_pipe_in_a_name():
    plan = parse_plan({"baseline": "a|b=random", "variants": ["c`d=bot"], "games": "tictactoe", "pairs": 1}, "test")
    text = markdown(ablation_report(plan, [], planned_matches=4), None)
    assert "| a\\|b (null) | a\\|b |" in text
    row = next(line for line in text.splitlines() if line.startswith("| c`d | a\\|b |"))
    assert row.count("|") - row.count("\\|") == 9, "8 cells"


def test_markdown_and_its_plot_are_written_side_by_side(tmp_path):
    records = [r for pair in range(4) for r in pair_records(PLAN, pair, "v", "base", WIN, DRAW) + pair_records(PLAN, pair, "base (null)", "base", WIN, WIN)]
    image = write_markdown(ablation_report(PLAN, records, planned_matches=48), tmp_path / "ablation.md")
    assert image == tmp_path / "ablation.png" and image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = (tmp_path / "ablation.md").read_text()
    assert "![mean pair difference with its 95% interval, per comparison](ablation.png)" in text
    assert "| v | base | 4 | 4/4/0 | +0.50 (+0.50..+0.50) |" in text
