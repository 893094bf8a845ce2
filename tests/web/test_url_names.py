"""Policy names are untrusted text: a name with "/" or "../" is one URL segment in every link,
and the link leads to that policy's page."""

from __future__ import annotations

import html as html_lib
import re

from fastapi.testclient import TestClient

from arena.match import MatchRecord
from league.scheduling import Pairing
from league.store import Store
from web.app import create_app

NAME = "../../evil/a b?c#d"


def test_links_to_a_policy_named_with_dot_dot_slash_reach_its_page(tmp_path):
    url = f"sqlite:///{tmp_path / 'names.db'}"
    store = Store(url)
    league = store.open_league("names")
    records = [MatchRecord(f"m{i}", "tictactoe", 2, i, [NAME, "bot"], ["random", "bot"], outcome={"scores": [0, 1], "ranks": [2, 1], "reason": "t"}, status="finished")
               for i in range(3)]
    store.schedule(league, [Pairing(r.match_id, "tictactoe", (NAME, "bot"), r.seed) for r in records])
    for record in records:
        store.finish(league, record.match_id, record)
    store.close()
    with TestClient(create_app(url)) as client:
        page = client.get("/").text
        hrefs = {html_lib.unescape(h) for h in re.findall(r'href="(/policies/[^"?]*)', page)}
        evil = [h for h in hrefs if "evil" in h]
        assert evil == ["/policies/..%2F..%2Fevil%2Fa%20b%3Fc%23d"]
        answer = client.get(evil[0] + "?league=names")
        assert answer.status_code == 200 and html_lib.escape(NAME, quote=False) in answer.text
