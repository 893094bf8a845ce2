"""Stored leagues survive the harness fields: a match stored before them (no `harness`,
`reasoning`, `reasoning_tokens`, `samples` in its turns' meta) and one stored with them load, rate
and export side by side, and the policy page shows an LLM's harness line (escaped) and a bot's none."""

from __future__ import annotations

import asyncio
import json

from fastapi.testclient import TestClient

from arena.match import MatchRecord, play_match
from arena.policy import make_policy
from games.registry import make_game
from league.export import EXPORTERS
from league.ratings import leaderboard
from league.scheduling import Pairing
from league.store import Store
from tests.llm.test_policies import ScriptedLLM
from web.app import create_app

NEW_KEYS = {"harness", "reasoning", "reasoning_tokens", "answer_tokens", "reasoning_tokens_estimated", "samples", "votes", "length_retry"}


def _played(name: str, spec: str, seed: int) -> MatchRecord:
    policy = ScriptedLLM(["<think>centre or corner? [0]</think>[4]", lambda legal: f"[{legal[0]}]"], spec=name, sampler="vote:2")
    policy.spec = spec
    return asyncio.run(play_match(make_game("tictactoe"), [policy, make_policy("bot")], seed=seed))


def _as_stored_before_the_harness(record: MatchRecord) -> MatchRecord:
    """The same match as an older version stored it: none of the new meta keys."""
    data = record.to_dict()
    for turn in data["turns"]:
        turn["meta"] = {k: v for k, v in turn["meta"].items() if k not in NEW_KEYS}
    return MatchRecord.from_dict(json.loads(json.dumps(data)))


def test_old_and_new_matches_load_rate_export_and_show(tmp_path):
    new = _played("voter", "openai:m,sampler=vote:2", seed=1)
    assert NEW_KEYS & set(new.turns[0].meta) >= {"harness", "reasoning", "reasoning_tokens", "samples", "votes"}
    old = _as_stored_before_the_harness(_played("oldtimer", "openai:m", seed=2))
    assert not NEW_KEYS & {k for t in old.turns for k in t.meta}

    url = f"sqlite:///{tmp_path / 'mixed.db'}"
    store = Store(url)
    league = store.open_league("mixed")
    store.upsert_policy("voter", "openai:m,sampler=vote:2")
    store.upsert_policy("oldtimer", "openai:m")
    store.upsert_policy("bot", "bot")
    store.upsert_policy("odd", 'local,sampler=<script>alert(1)</script>')
    odd = _played("odd", "local,sampler=<script>alert(1)</script>", seed=3)  # a stored spec is shown, escaped, never parsed into an error
    for record in (new, old, odd):
        store.schedule(league, [Pairing(record.match_id, "tictactoe", tuple(record.policies), record.seed)])
        store.finish(league, record.match_id, record)

    loaded = {r.policies[0]: r for r in store.iter_records(league)}
    assert loaded["voter"].turns[0].meta["harness"]["sampler"] == "vote:2"
    assert [t.meta for t in loaded["oldtimer"].turns] == [t.meta for t in old.turns]
    assert {row.policy for row in leaderboard(store.results(league), by="elo", bootstrap=0)} == {"voter", "oldtimer", "odd", "bot"}
    written = {kind: export(store, tmp_path / f"{kind}.jsonl", league_id=league) for kind, export in EXPORTERS.items()}
    assert written["records"] == written["battles"] == 3
    store.close()

    client = TestClient(create_app(url))
    page = client.get("/policies/voter?league=mixed").text
    assert "harness: sampler <code>vote:2</code> · parser <code>strict</code> · prompt <code>default</code>" in page
    assert "harness:" not in client.get("/policies/bot?league=mixed").text
    assert client.get("/api/policies/voter?league=mixed").json()["harness"] == {"sampler": "vote:2", "parser": "strict", "prompt": "default"}
    assert client.get("/api/policies/bot?league=mixed").json()["harness"] is None
    page = client.get("/policies/odd?league=mixed")
    assert page.status_code == 200 and "<script>alert(1)" not in page.text and "sampler <code>&lt;script&gt;alert(1)" in page.text
