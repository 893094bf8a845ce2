"""`arena web` reads only: a store that does not exist is refused in one line (exit 2, nothing
created), and an empty one answers / with a page that says how to start a league. `arena web
--play` writes (visitors' games), so it starts a new store, its play league in it."""

from __future__ import annotations

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from league.store import Store
from llm_arena_cli.app import app
from web.app import create_app


def test_web_refuses_a_store_that_does_not_exist(tmp_path):
    typo = tmp_path / "fresh.db"
    result = CliRunner().invoke(app, ["web", "--db", f"sqlite:///{typo}", "--port", "1"])
    assert result.exit_code == 2
    assert result.stderr.strip().startswith(f"error: no league store at sqlite:///{typo}") and "\n" not in result.stderr.strip()
    assert not typo.exists()


def test_web_play_starts_a_new_store_with_its_league_and_serves_it(tmp_path, monkeypatch):
    """One command starts a site collecting human games: the store and the play league are created,
    the front page is that league's board with the Play link, and a finished game is stored there."""
    import uvicorn

    fresh = tmp_path / "new" / "games.db"
    fresh.parent.mkdir()
    url = f"sqlite:///{fresh}"
    served: dict[str, object] = {}

    def serve(app, **options) -> None:  # instead of listening: what a browser would get
        served.update(options)
        # at the address it was told to listen on: the app answers only to its own names
        with TestClient(app, base_url=f"http://{options['host']}:{options['port']}") as client:
            served["front"] = client.get("/")
            served["play"] = client.get("/play")
            view = client.post("/api/play", json={"game": "tictactoe", "opponent": "random", "name": "guest", "seed": 3}).json()
            while not view["done"]:
                view = client.post(f"/api/play/{view['id']}/move", json={"move": view["legal_moves"][0]}).json()
            served["board"] = client.get("/api/leaderboard").json()

    monkeypatch.setattr(uvicorn, "run", serve)
    result = CliRunner().invoke(app, ["web", "--play", "--play-league", "visitors", "--db", url, "--port", "8123", "--refresh", "0"])
    assert result.exit_code == 0, result.output
    assert f"(store: {url}, new;" in result.stdout and "finished games join league visitors" in result.stdout
    assert served["port"] == 8123 and served["front"].status_code == 200 and served["play"].status_code == 200
    front = served["front"].text
    assert "No leagues yet" not in front and "league: visitors" in front and 'href="/play"' in front
    assert sorted(row["policy"] for row in served["board"]["rows"]) == ["guest", "random"] and served["board"]["league"] == "visitors"
    with Store(url) as store:
        assert store.league_names() == ["visitors"]
        assert [store.match_record(i).policies for i in store.match_ids(store.league_id("visitors"))] == [["guest", "random"]]
    # The store is now there: read-only commands open it.
    assert CliRunner().invoke(app, ["leaderboard", "--db", url]).exit_code == 0


def test_web_play_on_a_store_with_leagues_opens_its_league_with_the_first_game(tmp_path):
    """On a store that has leagues, the play league would become the newest, the board `arena web`
    shows first: it is created only when a game is stored, as before."""
    url = f"sqlite:///{tmp_path / 'league.db'}"
    with Store(url) as store:
        store.open_league("main")
    from web.play import PlayConfig

    with TestClient(create_app(url, play=PlayConfig())):
        pass
    with Store(url) as store:
        assert store.league_names() == ["main"]


def test_an_empty_store_shows_how_to_start_a_league(tmp_path):
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    Store(url).close()
    with TestClient(create_app(url)) as client:
        page = client.get("/")
    assert page.status_code == 200
    assert "No leagues yet" in page.text and f"arena league run examples/demo-league.yaml --db {url}" in page.text


def test_web_shows_no_secret_of_a_store_it_cannot_open(tmp_path, monkeypatch):
    """SQLAlchemy hides a URL's password but quotes its query string in its errors; a driver's
    error may quote more. Both lines `arena web` prints for a bad store are redacted."""
    monkeypatch.chdir(tmp_path)
    Store("sqlite:///there.db").close()
    secrets = ("pw-web-4411", "zq-web-token-9911")
    cases = {  # a file that exists behind a URL SQLite cannot use; a file that does not exist
        f"sqlite://user:{secrets[0]}@/there.db?token={secrets[1]}": "error: cannot open the league store: ArgumentError: Invalid SQLite URL",
        f"sqlite:///missing.db?token={secrets[1]}": "error: no league store at sqlite:///missing.db?token=***",
    }
    for url, expected in cases.items():
        result = CliRunner().invoke(app, ["web", "--db", url, "--port", "1"])
        assert result.exit_code == 2 and result.stderr.startswith(expected), result.stderr
        assert "***" in result.stderr and not any(secret in result.stderr for secret in secrets)
