"""The pages in a real headless Chromium (Debian's, driven by Playwright): the leaderboard renders
with intervals and sorts, a replay steps forward and back with shareable URLs, the rating chart
draws. (The README's pictures are made by `make pictures`, never by a test: tests/web/test_pictures.py.)"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.slow


def test_leaderboard_renders_with_cis_sorts_and_filters(server_url, page):
    page.goto(f"{server_url}/?league=main&system=bt")
    rows = page.locator("#board tbody tr")
    assert rows.count() == 3
    cis = page.locator("#board .ci-text").all_inner_texts()
    assert len(cis) == 3 and all(re.fullmatch(r"\[-?\d+\.\d, -?\d+\.\d\]", t) for t in cis), cis
    ranks = [int(t) for t in page.locator("#board tbody td:nth-child(1)").all_inner_texts()]
    assert ranks == sorted(ranks)
    page.click("#board th:nth-child(5)")  # games: sort descending... first click ascending
    page.click("#board th:has-text('Policy')")
    names = page.locator("#board td.policy").all_inner_texts()
    assert names == sorted(names, key=str.lower)
    page.click("#board th:has-text('Policy')")
    assert page.locator("#board td.policy").all_inner_texts() == sorted(names, key=str.lower, reverse=True)
    page.fill("#row-filter", "bot")
    assert page.locator("#board tbody tr:not([hidden])").count() == 1
    page.fill("#row-filter", "")
    page.select_option("select[name=game]", "nim")  # the game switch submits itself
    page.wait_for_url(re.compile(r".*game=nim.*"))
    assert "Leaderboard · nim" in page.inner_text("h1")


def test_replay_steps_forward_and_back_with_shareable_urls(client, server_url, page):
    match_id = client.get("/api/matches?league=main&game=tictactoe&policy=bot").json()["matches"][0]["id"]
    count = len(client.get(f"/api/matches/{match_id}").json()["turns"])
    assert count >= 3
    page.goto(f"{server_url}/matches/{match_id}")
    position = page.locator("#position")
    assert position.inner_text() == f"step 1 / {count}"
    assert page.locator("section.turn:not([hidden])").get_attribute("id") == "turn-1"
    page.click("#next")
    page.click("#next")
    assert position.inner_text() == f"step 3 / {count}"
    assert page.locator("section.turn:not([hidden])").get_attribute("id") == "turn-3"
    assert "turn=3" in page.url and page.url.endswith("#turn-3")
    page.click("#prev")
    assert position.inner_text() == f"step 2 / {count}" and "turn=2" in page.url
    page.keyboard.press("ArrowRight")
    assert position.inner_text() == f"step 3 / {count}"
    # the shared URL opens on its step, with or without JS-only fragments
    page.goto(f"{server_url}/matches/{match_id}?turn=2")
    assert page.locator("section.turn:not([hidden])").get_attribute("id") == "turn-2"
    page.goto(f"{server_url}/matches/{match_id}#turn-{count}")
    assert position.inner_text() == f"step {count} / {count}"
    # play runs to the end
    page.goto(f"{server_url}/matches/{match_id}")
    page.select_option("#speed", "250")
    page.click("#play")
    page.wait_for_selector(f"#turn-{count}:not([hidden])", timeout=count * 1000 + 5000)
    assert position.inner_text() == f"step {count} / {count}"


def test_rating_chart_draws(client, server_url, page):
    history = client.get("/api/policies/bot?league=main&system=elo").json()["history"]
    assert len(history) >= 2
    page.goto(f"{server_url}/policies/bot?league=main&system=elo")
    path = page.locator("#rating-chart path.line")
    assert path.count() == 1
    d = path.get_attribute("d")
    assert d.startswith("M") and d.count("L") == len(history) - 1
    assert page.locator("#rating-chart circle.dot").count() == len(history)
    box = page.locator("#rating-chart").bounding_box()
    assert box["width"] > 300 and box["height"] > 100


def test_training_run_chart_draws_checkpoints_and_opponents(client, server_url, page):
    from urllib.parse import quote

    from tests.web.conftest import RUN_PAYLOAD

    run = client.get(f"/api/runs/{quote(RUN_PAYLOAD, safe='')}").json()
    rated = [c for c in run["checkpoints"] if c["rating"] is not None]
    page.goto(f"{server_url}/runs")
    page.click("#runs a")  # the run's link (its name is a payload: the URL must survive quoting)
    page.wait_for_selector("#rating-chart path.line")
    assert page.locator("#rating-chart path.line").get_attribute("d").count("L") == len(rated) - 1 == 1
    assert page.locator("#rating-chart circle.dot").count() == len(rated)
    assert page.locator("#rating-chart line.ref").count() == len(run["opponents"]) == 2
    assert sorted(page.locator("#rating-chart text.ref-label").all_text_contents()) == ["bot", "random-b"]
    assert page.locator("#checkpoints tbody tr").count() == 3 and page.errors == []


def test_live_view_polls(server_url, page):
    page.goto(f"{server_url}/live?league=main")
    page.wait_for_selector("#live-updated:not(:empty)", timeout=10_000)
    assert page.locator("[data-status=finished]").inner_text() == "12"
    assert page.locator("#live-standings tbody tr").count() == 3

