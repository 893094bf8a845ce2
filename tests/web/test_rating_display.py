"""Ratings that read right on the web: each number beside the interval of that same number (the
TrueSkill table and the policy chart show mu with mu's interval), a missing interval says why, and
a shared rank explains itself."""

from __future__ import annotations

import html as html_lib
import json
import re


def _rows(page: str) -> list[list[str]]:
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in body.split("<tr>")[1:]]


def test_trueskill_table_shows_mu_inside_its_interval_and_the_conservative_rating_apart(client):
    page = client.get("/?league=main&system=trueskill").text
    assert "95% CI of mu" in page and "mu − 3σ" in page
    for cells in _rows(page):
        mu = float(cells[2])
        lo, hi = (float(x) for x in re.findall(r"-?\d+\.\d", cells[3]))
        conservative = float(cells[4])
        assert lo - 0.05 <= mu <= hi + 0.05 and conservative < mu


def test_policy_chart_line_runs_inside_its_band(client):
    page = client.get("/policies/bot?league=main&system=trueskill").text
    points = json.loads(html_lib.unescape(re.search(r'id="chart-data">(.*?)</script>', page, re.S).group(1)))
    assert points and all(p["lo"] <= p["y"] <= p["hi"] for p in points)


def test_elo_says_it_has_no_interval_and_shared_ranks_say_why(client):
    page = client.get("/?league=main&system=elo").text
    assert "95% CI" not in page and "Elo has no interval" in page
    trueskill = client.get("/?league=main&game=nim&system=trueskill").text
    ranks = [cells[0] for cells in _rows(trueskill)]
    assert len(set(ranks)) < len(ranks)  # a few matches per pair: the intervals overlap
    assert "is shared by" in trueskill and "95% CIs overlap" in trueskill
