"""The leaderboard's per-move columns on the web (page, JSON, CSV, policy page) on a store whose
figures are known (tests/league/move_store.py), the reasoning model named with an XSS payload:
the same values and names as league.move_stats, unknown as null or "–", definitions shown, and
every name escaped."""

import csv
import html
import io
import re

import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from league.move_stats import COLUMNS, DEFINITIONS, MOVE_DEFINITION
from league.store import Store
from tests.league.move_store import EXPECTED, fill
from tests.web.conftest import NAME_PAYLOAD

TOLERANCE = 1e-12  # means and medians of at most four float64 values


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from web.app import create_app

    url = f"sqlite:///{tmp_path_factory.mktemp('moves') / 'moves.db'}"
    with Store(url) as store:
        fill(store, thinker=NAME_PAYLOAD)
    with TestClient(create_app(url)) as c:
        yield c


def _expected(policy: str) -> dict:
    return EXPECTED["thinker" if policy == NAME_PAYLOAD else policy]


def test_json_rows_carry_every_figure_under_its_stable_name(client):
    rows = {r["policy"]: r for r in client.get("/api/leaderboard", params={"league": "lab"}).json()["rows"]}
    assert set(rows) == {NAME_PAYLOAD, "legacy", "bot"}
    for policy, row in rows.items():
        assert set(COLUMNS) <= set(row)
        for name, value in _expected(policy).items():
            assert row[name] == (value if value is None or isinstance(value, int) else pytest.approx(value, rel=TOLERANCE)), (policy, name)
    schema = client.get("/api/openapi.json").json()["components"]["schemas"]["LeaderboardEntry"]["properties"]
    assert all(schema[name]["description"] == DEFINITIONS[name] for name in DEFINITIONS)


def test_csv_has_the_same_columns_with_unknown_left_empty(client):
    text = client.get("/api/leaderboard.csv", params={"league": "lab"}).text
    rows = {r["policy"].lstrip("'"): r for r in csv.DictReader(io.StringIO(text))}
    assert set(COLUMNS) <= set(rows["legacy"])
    assert rows["legacy"]["reasoning_tokens_per_move"] == "" and rows["legacy"]["cost_usd"] == ""
    assert float(rows["legacy"]["forfeit_rate"]) == 0.5 and rows["legacy"]["prompt_tokens_per_move"] == "50.0"


def test_page_shows_the_columns_their_definitions_and_escapes_names(client):
    page = client.get("/", params={"league": "lab"}).text
    assert NAME_PAYLOAD not in page and "<img src=x" not in page and str(escape(NAME_PAYLOAD)) in page
    headers = re.findall(r'<th data-type="num" title="([^"]*)">([^<]*)</th>', page)
    shown = {label: html.unescape(title) for title, label in headers if html.unescape(title) in DEFINITIONS.values()}
    assert shown["Forfeit"] == DEFINITIONS["forfeit_rate"] and shown["Reasoning tok"] == DEFINITIONS["reasoning_tokens_per_move"]
    legend = dict(re.findall(r"<dt>([^<]*)</dt><dd>([^<]*)</dd>", page))
    assert {label: html.unescape(text) for label, text in legend.items()} == {"Per move": MOVE_DEFINITION, **shown}
    assert len(shown) == 8  # invalid, forfeit, prompt, reasoning, answer, $ / move, $ total, median
    legacy = re.search(r'<td data-v="legacy" class="policy">.*?</tr>', page, re.S).group(0)
    cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", legacy)]
    assert cells[-9:-1] == ["50.0%", "50.0%", "50", "–", "–", "–", "–", "4.5"]  # old-format turns: unknown, not 0


def test_policy_page_shows_forfeits_tokens_cost_and_median(client):
    page = html.unescape(client.get(f"/policies/{NAME_PAYLOAD}", params={"league": "lab"}).text)
    assert "1 (50.0%)" in page  # matches forfeited
    assert "100 / 20 / 13 (generated: 33)" in page and "2.5 s" in page and "0.0015 / 0.003" in page
