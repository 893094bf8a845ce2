"""Training runs on the web: checkpoints registered and evaluated the way `arena train` does it
(tests/web/conftest.py plays them as real leagues), pooled into one Bradley-Terry fit."""

from __future__ import annotations

from urllib.parse import quote

from league.config import GameEntry, LeagueConfig, PolicyEntry
from league.ratings import leaderboard
from league.results import outcome_of
from league.store import Store
from tests.web.conftest import RUN_PAYLOAD, RUN_STEPS, _play, play_training_run

RUN_URL = quote(RUN_PAYLOAD, safe="")


def _eval_results(url: str, run: str) -> list:
    with Store(url) as store:
        return [r for league in store.leagues() if league.name.startswith(f"{run}/eval/") for r in store.results(league.id)]


def test_runs_are_listed_with_their_checkpoints(client):
    runs = {r["name"]: r for r in client.get("/api/runs").json()}
    assert runs == {RUN_PAYLOAD: {"name": RUN_PAYLOAD, "base": "local", "checkpoints": 3, "evaluated": 2, "last_step": 3}}


def test_run_rates_checkpoints_on_one_pooled_scale(client, league_db):
    body = client.get(f"/api/runs/{RUN_URL}").json()
    steps = {c["step"]: c for c in body["checkpoints"]}
    assert sorted(steps) == [1, 2, 3]
    # the same numbers as league.ratings over the pooled evaluation matches
    results = _eval_results(league_db, RUN_PAYLOAD)
    expected = {row.policy: row for row in leaderboard(results, by="bt", bootstrap=200)}
    for step in RUN_STEPS:
        c, row = steps[step], expected[f"{RUN_PAYLOAD}/step-{step}"]
        assert c["eval_league"] == f"{RUN_PAYLOAD}/eval/step-{step}"
        assert (c["rating"], c["lo"], c["hi"], c["rank"]) == (row.rating, row.lo, row.hi, row.rank)
        assert c["lo"] <= c["rating"] <= c["hi"]
    assert {o["policy"] for o in body["opponents"]} == {"bot", "random-b"}
    assert all(o["rating"] == expected[o["policy"]].rating for o in body["opponents"])
    assert steps[2]["rating"] > steps[1]["rating"]  # the minimax checkpoint beats the random one
    assert steps[3]["rating"] is None and steps[3]["eval_league"] is None and steps[3]["games"] == 0
    assert body["matches"] == len(results)


def test_checkpoint_records_count_only_games_against_opponents(client, league_db):
    body = client.get(f"/api/runs/{RUN_URL}").json()
    results = _eval_results(league_db, RUN_PAYLOAD)
    for c in body["checkpoints"][:2]:
        mine = [r for r in results if c["policy"] in r.players]
        outcomes = [outcome_of(r, c["policy"]) for r in mine]
        assert (c["wins"], c["draws"], c["losses"]) == (outcomes.count("win"), outcomes.count("draw"), outcomes.count("loss"))
        assert c["games"] == len(mine) == sum(v["games"] for v in c["versus"])
        assert {v["column"] for v in c["versus"]} == {"bot", "random-b"}
        assert c["score"] == (c["wins"] + c["draws"] / 2) / c["games"]


def test_run_pages_render_escaped(client):
    listing = client.get("/runs")
    assert listing.status_code == 200 and RUN_PAYLOAD not in listing.text
    assert 'tiny&#34;&gt;&lt;img src=x onerror=alert(7)&gt;' in listing.text
    page = client.get(f"/runs/{RUN_URL}")
    assert page.status_code == 200 and RUN_PAYLOAD not in page.text
    assert page.text.count('<tr>') >= 3 + 2  # three checkpoints, two opponents
    assert 'id="chart-data"' in page.text and "<img" not in page.text.split('id="chart-data"')[1].split("</script>")[0]


def test_unknown_run_is_a_clean_404(client):
    for path in ("/runs/nope", "/api/runs/nope"):
        response = client.get(path)
        assert response.status_code == 404 and "no training run named" in response.text and "nope" in response.text


def test_run_is_refitted_when_a_new_evaluation_lands(tmp_path):
    from fastapi.testclient import TestClient

    from web.app import create_app

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    play_training_run(url, "r", {1: "random,seed=x"})
    with TestClient(create_app(url, refresh_s=0)) as c:
        first = c.get("/api/runs/r").json()
        assert [ck["step"] for ck in first["checkpoints"]] == [1]
        play_training_run(url, "r", {2: "bot"})
        second = c.get("/api/runs/r").json()
        assert [ck["step"] for ck in second["checkpoints"]] == [1, 2]
        assert second["checkpoints"][1]["rating"] > second["checkpoints"][0]["rating"]
        assert second["matches"] > first["matches"]


def test_league_without_notes_keeps_registered_ones(tmp_path):
    url = f"sqlite:///{tmp_path / 'notes.db'}"
    with Store(url) as store:
        store.upsert_policy("run/step-5", "random", {"run": "run", "step": 5}, replace=True)
    _play(url, LeagueConfig(name="plain", seed=1, matches_per_pair=1, games=[GameEntry(id="nim")],
                            policies=[PolicyEntry(name="run/step-5", spec="random"), PolicyEntry(name="bot", spec="bot")]))
    with Store(url) as store:
        assert store.policy("run/step-5").meta == {"run": "run", "step": 5}
