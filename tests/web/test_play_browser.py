"""The Play page (`arena web --play`) in a real headless Chromium (Debian's, driven by Playwright),
with the app's Content-Security-Policy in force: full games clicked through the legal-move
buttons, a typed move the game rejects. (The picture in docs/web.md is made by `make pictures`.)"""

from __future__ import annotations

import re

import pytest

from tests.web.conftest import PLAY_PAYLOAD

pytestmark = pytest.mark.slow


@pytest.fixture
def strict_page(browser):
    """A page WITHOUT bypass_csp (unlike the shared `page`): the play page must work under the
    app's real CSP. CSP violations and script errors are collected, and alerts recorded. (Waits
    use locators: wait_for_function evaluates a string, which this CSP forbids.)"""
    context = browser.new_context(viewport={"width": 1280, "height": 860})
    pg = context.new_page()
    pg.add_init_script("window.__alerts = []; ['alert','confirm','prompt'].forEach(function (f) { window[f] = function (m) { window.__alerts.push(String(m)); }; });")
    pg.problems = []
    pg.on("pageerror", lambda e: pg.problems.append(str(e)))

    def console(message) -> None:
        url = message.location.get("url", "")
        if message.type == "error" and not url.endswith("/favicon.ico"):  # the app has no icon; browsers ask anyway
            pg.problems.append(f"{message.text} {url}")

    pg.on("console", console)
    yield pg
    context.close()


def start(page, url, game, opponent="bot", name="alice-browser"):
    page.goto(f"{url}/play")
    page.fill("#play-name", name)
    page.select_option("#play-game", game)
    page.select_option("#play-opponent", opponent)
    page.click("#play-start")
    page.wait_for_selector("#play-area", state="visible")


def click_to_end(page, max_moves=60) -> int:
    """Click the first legal-move button until the result shows; returns the moves made."""
    for n in range(1, max_moves + 1):
        if page.locator("#play-result").is_visible():
            return n - 1
        page.locator("#play-moves button.move").first.click()
        # the page logs the move when the server has answered, then draws the new view
        page.locator("#play-log li").nth(n - 1).wait_for()
    raise AssertionError(f"no result after {max_moves} moves")


def test_full_tictactoe_game_against_bot(play_server_url, strict_page):
    page = strict_page
    start(page, play_server_url, "tictactoe")
    assert page.inner_text("#play-title") == "tictactoe · alice-browser (P0) vs bot"
    assert page.locator("#play-moves button.move").all_inner_texts() == [str(i) for i in range(9)]
    assert "You are X." in page.inner_text("#play-text") and page.locator("#play-type").is_hidden()
    moves = click_to_end(page)
    assert 3 <= moves <= 5
    result = page.inner_text("#play-result")
    assert re.match(r"(You won|You lost|Draw) ", result), result
    assert page.locator("#play-moves button").count() == 0
    status = page.inner_text("#play-status")
    match_id = re.search(r"as match (\d+)", status).group(1)
    assert "Stored in league web-play" in status
    page.click("#play-replay")
    page.wait_for_url(f"**/matches/{match_id}")
    assert page.inner_text("h1") == f"Match {match_id} · tictactoe"
    assert "alice-browser" in page.inner_text("p.meta")
    assert page.problems == [] and page.evaluate("window.__alerts") == []


def test_textarena_game_to_its_end_against_a_league_policy(play_server_url, strict_page):
    page = strict_page
    # the opponent is a league policy whose name is a script payload: it must stay text
    start(page, play_server_url, "textarena:TicTacToe-v0", opponent=PLAY_PAYLOAD)
    assert page.inner_text("#play-title") == f"textarena:TicTacToe-v0 · alice-browser (P0) vs {PLAY_PAYLOAD}"
    assert page.locator("#play-moves button.move").first.inner_text() == "[0]"
    assert "Current Board" in page.inner_text("#play-text")
    click_to_end(page)
    assert page.locator("#play-result").is_visible() and "Stored in league web-play" in page.inner_text("#play-status")
    assert page.locator("img[src=x]").count() == 0 and page.locator("script:not([src])").count() == 0
    assert page.problems == [] and page.evaluate("window.__alerts") == []
    # a new game starts from the setup form again
    page.click("#play-new")
    assert page.locator("#play-setup").is_visible() and page.locator("#play-area").is_hidden()


def test_free_text_move_rejected_shows_the_games_feedback(play_server_url, strict_page):
    page = strict_page
    start(page, play_server_url, "negotiation")
    assert page.locator("#play-moves button").count() == 0 and page.locator("#play-type").is_visible()
    page.fill("#play-move", "[Accept]")  # there is no offer to accept yet
    page.click("#play-send")
    page.wait_for_selector("#play-feedback", state="visible")
    assert page.inner_text("#play-feedback").startswith("Rejected: ")
    assert page.inner_text("#play-log li") == "[Accept] (rejected)"
    assert "attempt 2" in page.inner_text("#play-status")
    page.fill("#play-move", "hello, shall we split? [Offer: 0 books, 0 hats, 1 balls]")
    page.keyboard.press("Enter")
    page.locator("#play-log li").nth(1).wait_for()
    assert page.locator("#play-feedback").is_hidden() and "You: hello, shall we split?" in page.inner_text("#play-text")
    assert page.problems == []


def test_bad_start_is_shown_and_reload_resumes(play_server_url, strict_page):
    page = strict_page
    page.goto(f"{play_server_url}/play")
    page.fill("#play-name", "champion")  # a league policy's name
    page.click("#play-start")
    page.wait_for_selector("#play-setup-error", state="visible")
    assert "belongs to a league policy" in page.inner_text("#play-setup-error")
    start(page, play_server_url, "connect_four", name="dora")
    page.locator("#play-moves button.move").nth(3).click()
    page.locator("#play-log li").first.wait_for()
    board = page.inner_text("#play-text")
    page.reload()
    page.wait_for_selector("#play-area", state="visible")
    assert page.inner_text("#play-text") == board and page.locator("#play-moves button.move").count() == 7

