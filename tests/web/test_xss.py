"""Markup from policy names and model replies stays text: the raw HTML escapes it, and in a real
Chromium no planted script runs (alert/confirm/prompt hooked, dialogs watched) and no planted
element (img onerror, svg onload, script) exists in the DOM, while the payload is visible as text."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.web.conftest import NAME_PAYLOAD, REPLY_PAYLOAD, RUN_PAYLOAD


def _payload_match(client) -> int:
    matches = client.get("/api/matches", params={"league": "main", "policy": NAME_PAYLOAD, "game": "tictactoe"}).json()["matches"]
    return matches[0]["id"]


def _pages(client) -> list[str]:
    match_id = _payload_match(client)
    name = quote(NAME_PAYLOAD, safe="")
    return [
        "/?league=main", "/?league=main&system=bt", "/?league=main&game=tictactoe",
        f"/policies/{name}?league=main", "/policies/bot?league=main", "/h2h?league=main", "/matches?league=main",
        f"/matches?league=main&policy={name}", f"/matches/{match_id}?turn=1", f"/matches/{match_id}?turn=2", "/live?league=main",
        "/runs", f"/runs/{quote(RUN_PAYLOAD, safe='')}",
    ]


def test_html_escapes_every_payload(client):
    for path in _pages(client):
        html = client.get(path).text
        for raw in ("<script>alert", "<img src=x", "<img src=y", "<svg onload", "onerror=alert(1)>", "onerror=alert(7)>"):
            assert raw not in html, f"{path}: unescaped {raw!r}"
    name_page = client.get(f"/policies/{quote(NAME_PAYLOAD, safe='')}?league=main").text
    assert "x&#34;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in name_page
    replay = client.get(f"/matches/{_payload_match(client)}?turn=1").text
    assert "&lt;/pre&gt;&lt;script&gt;alert(3)&lt;/script&gt;" in replay


def test_payloads_are_stored_verbatim(client):
    """The test is only meaningful if the payloads really reached the store."""
    detail = client.get(f"/api/matches/{_payload_match(client)}").json()
    assert NAME_PAYLOAD in detail["seats"]
    assert any(REPLY_PAYLOAD in t["raw"] for t in detail["turns"])
    assert any(t["action"] == REPLY_PAYLOAD and not t["valid"] for t in detail["turns"])


INJECTED = """() => ({
  alerts: window.__alerts.slice(),
  imgs: document.querySelectorAll('img[src="x"], img[src="y"], img[onerror]').length,
  svgs: document.querySelectorAll('svg[onload]').length,
  inline: Array.from(document.scripts).filter(s => !s.src && s.type !== 'application/json').length,
  text: document.body.innerText,
})"""


@pytest.mark.slow
def test_no_payload_executes_in_chromium(client, server_url, page):
    for path in _pages(client):
        page.goto(server_url + path)
        page.wait_for_load_state("load")
        if path.startswith("/live"):
            page.wait_for_function("document.getElementById('live-updated').textContent.length > 0", timeout=10_000)
        found = page.evaluate(INJECTED)
        assert found["alerts"] == [] and page.dialogs == [], f"{path}: a planted script ran"
        assert (found["imgs"], found["svgs"], found["inline"]) == (0, 0, 0), f"{path}: planted markup became elements {found}"
        assert page.errors == [], f"{path}: page errors {page.errors}"
        if path.startswith(("/?", "/policies/%", "/h2h", "/matches?")):
            assert NAME_PAYLOAD in found["text"], f"{path}: the payload name is not shown as text"
        if path.startswith("/runs"):
            assert RUN_PAYLOAD in found["text"], f"{path}: the payload run name is not shown as text"
    # the replay's own steps also show payload replies as text after JS moves between them
    match_id = _payload_match(client)
    turns = client.get(f"/api/matches/{match_id}").json()["turns"]
    step = 1 + next(i for i, t in enumerate(turns) if REPLY_PAYLOAD in t["raw"])
    page.goto(f"{server_url}/matches/{match_id}?turn={step}")
    for button in (("#prev", "#next") if step > 1 else ("#next", "#prev")):
        page.click(button)
    found = page.evaluate(INJECTED)
    assert REPLY_PAYLOAD in found["text"] and found["alerts"] == [] and found["imgs"] == 0
