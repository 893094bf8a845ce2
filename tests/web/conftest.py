"""A league store filled by REAL league runs (the league runner playing scripted bots), shared by
the web tests: two games, three policies, one of which has an XSS payload as its name and
replies with HTML/script payloads (first an invalid move, then a legal one, so the payload lands
in raw replies, parsed moves and the game's feedback), plus a second, older, small league, and a
training run (also named with a payload) whose checkpoints were registered and evaluated the way
`arena train` does it.
"""

from __future__ import annotations

import asyncio
import threading

import pytest

from arena.policy import Policy, PolicyReply, register_kind
from league.config import GameEntry, LeagueConfig, PolicyEntry
from league.runner import run_league
from league.store import Store
from tests.local_server import serve_in_thread
from tests.services import chromium

NAME_PAYLOAD = 'x"><img src=x onerror=alert(1)><script>alert(2)</script>'
REPLY_PAYLOAD = "</pre><script>alert(3)</script><img src=y onerror=alert(4)>'\"><svg onload=alert(5)>"
RUN_PAYLOAD = 'tiny"><img src=x onerror=alert(7)>'
RUN_STEPS = {1: "random,seed=s1", 2: "bot"}  # the run "learns": its step-2 checkpoint is the minimax bot
REPLY_PADDING = 3000  # longer than the page's reply cap, so the cap shows


class PayloadPolicy(Policy):
    """Replies with markup: attempt 0 is the payload itself (invalid), later attempts a legal
    move wrapped in the payload."""

    provider = "scripted"

    async def act(self, request):
        import random

        if request.attempt == 0:
            return PolicyReply(action=REPLY_PAYLOAD, raw=REPLY_PAYLOAD + " " * 10 + "z" * REPLY_PADDING)
        legal = request.legal_moves
        move = legal[0] if legal else request.random_move(random.Random(0))
        return PolicyReply(action=move, raw=f"{REPLY_PAYLOAD}\nmy move: {move}", prompt_tokens=12, completion_tokens=5)


register_kind("test-xss", lambda spec: PayloadPolicy(), "test-xss")


def _play(url: str, config: LeagueConfig) -> None:
    """Play a real league into `url`. In a thread of its own: Playwright's sync API (the session's
    browser) keeps an event loop running in the main thread, where asyncio.run refuses to start."""
    failure: list[BaseException] = []

    def play() -> None:
        store = Store(url)
        try:
            asyncio.run(run_league(config, store))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            failure.append(exc)
        finally:
            store.close()

    thread = threading.Thread(target=play)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


def play_training_run(url: str, run: str, steps: dict[int, str]) -> None:
    """What trainer.run does per checkpoint: register `RUN/step-K` with its run/step notes, then
    play the evaluation league `RUN/eval/step-K` against fixed opponents (an entry without notes,
    which must leave the registered ones alone)."""
    for step, spec in steps.items():
        name = f"{run}/step-{step}"
        with Store(url) as store:
            store.upsert_policy(name, spec, {"run": run, "step": step, "base": "local"}, replace=True)
        _play(url, LeagueConfig(
            name=f"{run}/eval/step-{step}", seed=10 + step, matches_per_pair=2, concurrency=2,
            games=[GameEntry(id="tictactoe")],
            policies=[PolicyEntry(name=name, spec=spec), PolicyEntry(name="bot", spec="bot"), PolicyEntry(name="random-b", spec="random,seed=b")],
        ))


@pytest.fixture(scope="session")
def league_db(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("web") / "league.db"
    url = f"sqlite:///{path}"
    _play(url, LeagueConfig(
        name="side", seed=4, matches_per_pair=2, concurrency=2,
        games=[GameEntry(id="tictactoe")],
        policies=[PolicyEntry(name="bot", spec="bot"), PolicyEntry(name="random-b", spec="random,seed=b")],
    ))
    play_training_run(url, RUN_PAYLOAD, RUN_STEPS)
    with Store(url) as store:  # registered, not evaluated yet
        store.upsert_policy(f"{RUN_PAYLOAD}/step-3", "random", {"run": RUN_PAYLOAD, "step": 3, "base": "local"})
    _play(url, LeagueConfig(
        name="main", seed=3, matches_per_pair=2, concurrency=4,
        games=[GameEntry(id="tictactoe"), GameEntry(id="nim")],
        policies=[PolicyEntry(name="bot", spec="bot"), PolicyEntry(name="random", spec="random"), PolicyEntry(name=NAME_PAYLOAD, spec="test-xss")],
    ))
    return url


@pytest.fixture(scope="session")
def app(league_db):
    from web.app import create_app

    return create_app(league_db)


@pytest.fixture(scope="session")
def client(app):
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        yield c


@pytest.fixture(scope="session")
def server_url(app):
    """The app behind a real uvicorn on 127.0.0.1, for the browser."""
    with serve_in_thread(app) as url:
        yield url


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser():
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    # bypass_csp: the escaping alone must keep payloads inert (the app's CSP is a second wall,
    # checked by its header test), so the browser ignores the CSP here.
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    pg = context.new_page()
    # Any alert/confirm/prompt or any call of a hooked alert is a script that ran.
    pg.add_init_script("window.__alerts = []; ['alert','confirm','prompt'].forEach(function (f) { window[f] = function (m) { window.__alerts.push(String(m)); }; });")
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


# ---- browser play (`arena web --play`): its own store, so the shared league store stays as it is
PLAY_PAYLOAD = 'champ"><img src=x onerror=alert(8)><script>alert(9)</script>'


@pytest.fixture(scope="session")
def play_db(tmp_path_factory) -> str:
    """A store holding league policies a visitor may (`champion`: bot; PLAY_PAYLOAD: bot, its
    name an XSS payload) and may not play against (`llm-champ`: the local model is not allowed by
    default; `agent-x`: an outside player stored by serve-env)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('play') / 'play.db'}"
    with Store(url) as store:
        store.upsert_policy("champion", "bot")
        store.upsert_policy(PLAY_PAYLOAD, "bot")
        store.upsert_policy("llm-champ", "local")
        store.upsert_policy("agent-x", "serve-env:agent-x", {"source": "serve-env"})
    return url


@pytest.fixture(scope="session")
def play_server_url(play_db):
    """An app with the Play page on, behind a real uvicorn, for the browser."""
    from web.app import create_app
    from web.play import PlayConfig

    with serve_in_thread(create_app(play_db, play=PlayConfig())) as url:
        yield url
