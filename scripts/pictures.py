"""The pictures of the web pages in README.md and docs/web.md, made from the demo league, so the first
picture a visitor sees is the product as it is (`make pictures`):

    .venv/bin/python scripts/pictures.py            # plays the demo league (about 2 min on 2 CPU cores)
    .venv/bin/python scripts/pictures.py --db sqlite:///demo.db   # a store `make demo` filled: nothing to play

1. `arena league run examples/demo-league.yaml` into a fresh store (or --db: a finished league
   resumes as a no-op), then `arena eval suite --quick` of one policy, so a report card exists;
2. `arena web --play` on that store, as a user starts it;
3. Debian's headless Chromium (Playwright), with the app's Content-Security-Policy in force, opens
   each page as a visitor would, refuses a page with a script error, and takes its picture;
4. the pictures and docs/img/pictures.json (what each shows, the files its page is made of and
   their SHA-256, web/page_files.py) replace the old ones together, only once every picture is made.

tests/web/test_pictures.py fails when a page's template, CSS, script or route changed after its
picture was taken: run this again then. No test writes these files.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import hashlib
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import quote

import httpx
import yaml

from web.page_files import file_hash, page_files

ROOT = Path(__file__).resolve().parents[1]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 800}
MANIFEST = "pictures.json"


@dataclass(frozen=True)
class Scene:
    """What the pictures show: the league's name, the policy whose page is shown, the evaluated policy."""

    league: str
    policy: str
    card: str


@dataclass(frozen=True)
class Picture:
    """One picture: its file under docs/img, what it shows, the page's template and route module,
    how a visitor gets the page to the state pictured (returns the URL path opened), and the
    height shown (None: the whole page)."""

    file: str
    shows: str
    template: str
    route: str
    open: Callable[[Any, str, Scene], str]
    height: int | None = None


def open_leaderboard(page: Any, base: str, scene: Scene) -> str:
    path = f"/?league={quote(scene.league)}"
    page.goto(base + path)
    page.wait_for_selector("#board tbody tr td.policy")
    return path


def open_policy(page: Any, base: str, scene: Scene) -> str:
    path = f"/policies/{quote(scene.policy, safe='')}?league={quote(scene.league)}"
    page.goto(base + path)
    page.wait_for_selector("#rating-chart path.line")
    return path


def open_report_card(page: Any, base: str, scene: Scene) -> str:
    page.goto(base + "/evals")
    page.locator("#evals td.policy a", has_text=scene.card).first.click()  # the link a visitor follows
    page.wait_for_selector("#card tbody tr")
    return page.url.removeprefix(base)


def open_play(page: Any, base: str, scene: Scene) -> str:
    page.goto(base + "/play")
    page.select_option("#play-game", "tictactoe")
    page.select_option("#play-opponent", "bot")
    page.click("#play-start")
    page.wait_for_selector("#play-area", state="visible")
    for _ in range(2):  # a game under way: two moves each
        logged = page.locator("#play-log li").count()
        page.locator("#play-moves button.move").nth(1).click()
        page.locator("#play-log li").nth(logged).wait_for()  # the page logs a move once the server has answered
    return "/play"


PICTURES = (
    Picture("leaderboard.png", "the demo league's leaderboard (TrueSkill, all games)", "leaderboard.html", "web/routes/leaderboard.py", open_leaderboard),
    Picture("policy.png", "a demo league policy's page, its top: the rating chart, results and moves, per game", "policy.html", "web/routes/policies.py", open_policy, height=1180),
    Picture("report-card.png", "a report card of `arena eval suite --quick` (Evaluations)", "eval.html", "web/routes/evals.py", open_report_card),
    Picture("play.png", "the Play page (`arena web --play`) in a game of Tic-Tac-Toe against the bot", "play.html", "web/routes/play.py", open_play),
)


# ---- 1. the store ----------------------------------------------------------------------------------
def arena(*args: str) -> None:
    """Run an `arena` command of this environment, its progress on the terminal; stop on failure."""
    command = [str(Path(sys.executable).with_name("arena")), *args]
    print("$ arena " + " ".join(args), flush=True)
    if subprocess.run(command, cwd=ROOT).returncode != 0:
        raise SystemExit(f"pictures: `arena {' '.join(args)}` failed")


def fill_store(db: str, league_file: Path, card_spec: str, card_name: str) -> None:
    arena("league", "run", str(league_file), "--db", db)
    arena("eval", "suite", "--policy", card_spec, "--name", card_name, "--quick", "--db", db)


# ---- 2. the site -----------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(db: str) -> Iterator[str]:
    """`arena web --play` on `db` in a subprocess; yields its base URL once it answers."""
    port = free_port()
    command = [str(Path(sys.executable).with_name("arena")), "web", "--play", "--db", db, "--host", "127.0.0.1", "--port", str(port)]
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                raise SystemExit(f"pictures: `arena web` stopped: {server.stderr.read().strip()[-500:] if server.stderr else ''}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("pictures: `arena web` did not answer in 120 s")
            time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# ---- 3. the pictures -------------------------------------------------------------------------------
def take(base: str, scene: Scene, into: Path) -> dict[str, dict[str, Any]]:
    """Every picture into `into`; returns the manifest's entry of each."""
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"pictures: {CHROMIUM} is missing (scripts/browser.sh installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    entries: dict[str, dict[str, Any]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            for picture in PICTURES:
                entries[picture.file] = take_one(browser, base, scene, picture, into / picture.file)
        finally:
            browser.close()
    return entries


def take_one(browser: Any, base: str, scene: Scene, picture: Picture, path: Path) -> dict[str, Any]:
    context = browser.new_context(viewport=VIEWPORT)  # the app's CSP in force, as for a visitor
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico") else None)
    try:
        shown = picture.open(page, base, scene)
        fit(page, picture.height)
        page.screenshot(path=str(path), full_page=picture.height is None)
    finally:
        context.close()
    if problems:
        raise SystemExit(f"pictures: {picture.file}: the page reported errors: {'; '.join(problems)[:500]}")
    files = page_files(picture.template, picture.route)
    print(f"{picture.file}: {shown}", flush=True)
    return {
        "shows": picture.shows, "page": shown, "template": picture.template, "route": picture.route,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "files": {f: file_hash(f) for f in files},
    }


# A table wider than the window scrolls inside its box (the leaderboard's .board-wrap); the picture
# shows all of it, in a window as wide as a visitor's wide screen would need to.
SCROLLED_OUT = """() => Math.max(0, ...Array.from(document.querySelectorAll('main *'))
    .filter(el => el.querySelector('table') && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX))
    .map(el => el.scrollWidth - el.clientWidth))"""
MAX_WIDTH = 1920


def fit(page: Any, height: int | None) -> None:
    width = min(MAX_WIDTH, VIEWPORT["width"] + page.evaluate(SCROLLED_OUT))
    if (width, height) != (VIEWPORT["width"], None):
        page.set_viewport_size({"width": width, "height": height or VIEWPORT["height"]})


# ---- 4. the manifest -------------------------------------------------------------------------------
def commit() -> str | None:
    found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 else None


def manifest(entries: dict[str, dict[str, Any]], league_file: Path, scene: Scene, card_spec: str) -> dict[str, Any]:
    return {
        "made_by": "make pictures (scripts/pictures.py)",
        "made_on": datetime.date.today().isoformat(),
        "commit": commit(),  # for readers; the files' hashes are what tests/web/test_pictures.py checks
        "store": {"league": league_file.relative_to(ROOT).as_posix() if league_file.is_relative_to(ROOT) else league_file.name,
                  "report_card": f"arena eval suite --policy {card_spec} --name {scene.card} --quick",
                  "served_by": "arena web --play"},
        "pictures": entries,
    }


def publish(made: Path, out: Path, data: dict[str, Any]) -> None:
    """Move the new pictures and their manifest into `out` (all of them, after all were made)."""
    out.mkdir(parents=True, exist_ok=True)
    for name in data["pictures"]:
        shutil.move(str(made / name), str(out / name))
    (out / MANIFEST).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", help="The store to picture (default: a fresh one, deleted afterwards); its league is played (or resumed) first.")
    parser.add_argument("--league", type=Path, default=ROOT / "examples" / "demo-league.yaml", help="The league file played (default: the demo league).")
    parser.add_argument("--policy", default="smol-t0.3", help="The league policy whose page is pictured (default: the demo's smol-t0.3).")
    parser.add_argument("--card", default="bot", help="The spec `arena eval suite --quick` evaluates for the report card (default: bot).")
    parser.add_argument("--card-name", help="Its name in the store (default: the spec).")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="Where the pictures and pictures.json go (default: docs/img).")
    args = parser.parse_args(argv)
    league = yaml.safe_load(args.league.read_text(encoding="utf-8"))["name"]
    scene = Scene(league=league, policy=args.policy, card=args.card_name or args.card)
    with tempfile.TemporaryDirectory(prefix="arena-pictures-") as scratch:
        db = args.db or f"sqlite:///{Path(scratch) / 'pictures.db'}"
        fill_store(db, args.league, args.card, scene.card)
        made = Path(scratch) / "made"
        made.mkdir()
        with serve(db) as base:
            entries = take(base, scene, made)
        publish(made, args.out, manifest(entries, args.league.resolve(), scene, args.card))
    print(f"pictures: {len(entries)} pictures and {MANIFEST} written to {args.out}")


if __name__ == "__main__":
    main()
