"""The evaluation pages: every stored `arena eval suite` card, one page per evaluated policy, and
the same cards as JSON; names with markup stay inert."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from evaluation.suite_evaluation import run_evaluation
from evaluation.suites import load_suite
from league.store import Store

PAYLOAD = 'ev"><img src=x onerror=alert(9)>'
pytestmark = pytest.mark.slow


def _evaluate(url: str, spec: str, name: str) -> None:
    """In a thread: asyncio.run refuses to start inside a running loop (pytest-asyncio, Playwright)."""
    def run() -> None:
        store = Store(url)
        try:
            run_evaluation(store, load_suite("core-v1"), spec, name, quick=True)
        finally:
            store.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()


@pytest.fixture(scope="module")
def eval_client(tmp_path_factory):
    from web.app import create_app

    url = f"sqlite:///{tmp_path_factory.mktemp('evals') / 'evals.db'}"
    _evaluate(url, "bot", "bot")
    _evaluate(url, "random", PAYLOAD)
    with TestClient(create_app(url)) as client:
        yield client


def test_the_evaluations_page_lists_every_card(eval_client):
    page = eval_client.get("/evals")
    assert page.status_code == 200
    assert "core-v1 (quick)" in page.text and ">bot</a>" in page.text
    assert PAYLOAD not in page.text and "&lt;img src=x onerror=alert(9)&gt;" in page.text


def test_a_policy_card_page_and_its_json_agree(eval_client):
    page = eval_client.get("/evals/bot", params={"suite": "core-v1", "quick": 1})
    assert page.status_code == 200
    card = eval_client.get("/api/evals/bot", params={"suite": "core-v1", "quick": 1}).json()
    assert card["policy"] == "bot" and card["complete"]
    for game in ("tictactoe", "kuhn_poker", "liars_dice", "overall"):
        assert f"<td>{game}</td>" in page.text
    assert f"{100 * card['overall']['score']:.1f}%" in page.text
    rating = card["rating"]  # core-v1 ships frozen anchors: the headline is on the page
    assert rating and f"Anchored rating <strong>{rating['rating']:.0f}</strong> (95% CI {rating['lo']:.0f} .. {rating['hi']:.0f})" in page.text
    assert f"{rating['rating']:.0f}</td>" in eval_client.get("/evals").text


def test_an_unknown_evaluation_is_a_404(eval_client):
    assert eval_client.get("/evals/nobody", params={"quick": 1}).status_code == 404
    assert eval_client.get("/api/evals/bot").status_code == 404  # bot was evaluated with --quick only
