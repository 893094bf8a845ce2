"""The pictures of the pages in README.md and docs/web.md are the product as it is: each was made by
`make pictures` (scripts/pictures.py) from the demo league, and none is older than the page it
shows. docs/img/pictures.json records, per picture, the SHA-256 of the picture and of every file its
page is made of (web/page_files.py); a template, stylesheet, script or route changed since fails
here until the pictures are made again. No test writes docs/img."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from web.page_files import ROOT, changed_since, file_hash, page_files

IMG = ROOT / "docs" / "img"
MAKE_AGAIN = "run `make pictures` (scripts/pictures.py) and commit docs/img"
IMAGE_REF = re.compile(r"!\[[^\]]*\]\(([^)\s]+)")


def manifest(folder: Path = IMG) -> dict[str, Any]:
    return json.loads((folder / "pictures.json").read_text(encoding="utf-8"))


def problems(folder: Path, data: dict[str, Any]) -> list[str]:
    """Why the pictures of `data` (a pictures.json) in `folder` do not show their pages as they are."""
    found = []
    for name, entry in data["pictures"].items():
        picture = folder / name
        if not picture.is_file():
            found.append(f"{name}: listed, but there is no such picture")
            continue
        if hashlib.sha256(picture.read_bytes()).hexdigest() != entry["sha256"]:
            found.append(f"{name}: not the picture pictures.json records (replaced by hand or by a test?)")
        now = page_files(entry["template"], entry["route"])
        if sorted(entry["files"]) != now:
            found.append(f"{name}: its page is made of {now} now, the picture recorded {sorted(entry['files'])}")
        stale = changed_since(entry["files"])
        if stale:
            found.append(f"{name} is older than its page: {', '.join(stale)} changed since it was taken")
    return found


def image_refs(doc: Path) -> list[Path]:
    """The local images a markdown page shows, in order, as paths."""
    return [(doc.parent / ref).resolve() for ref in IMAGE_REF.findall(doc.read_text(encoding="utf-8")) if "://" not in ref]


def test_pictures_are_not_older_than_the_pages_they_show():
    found = problems(IMG, manifest())
    assert not found, "\n".join(found) + "\n" + MAKE_AGAIN


def test_the_readme_opens_with_the_leaderboard_and_every_page_picture_is_made():
    data = manifest()
    readme = image_refs(ROOT / "README.md")
    assert readme and readme[0] == IMG / "leaderboard.png", "README.md's first picture must be the leaderboard"
    assert data["pictures"]["leaderboard.png"]["page"].startswith("/?league=demo")
    shown = {path for doc in ("README.md", "docs/web.md") for path in image_refs(ROOT / doc)}
    made = {IMG / name for name in data["pictures"]}
    assert shown <= made, f"pictures of pages not made by `make pictures`: {sorted(str(p) for p in shown - made)}"
    assert made <= shown, f"pictures made but shown nowhere: {sorted(str(p) for p in made - shown)}"
    for entry in data["pictures"].values():  # the route named renders the template named
        assert f'"{entry["template"]}"' in (ROOT / entry["route"]).read_text(encoding="utf-8"), entry


def test_page_files_follow_extends_includes_and_static_files():
    assert page_files("leaderboard.html", "web/routes/leaderboard.py") == [
        "web/routes/leaderboard.py", "web/static/app.css", "web/static/common.js", "web/static/table.js",
        "web/templates/_scope.html", "web/templates/base.html", "web/templates/leaderboard.html",
    ]
    assert "web/static/chart.js" in page_files("policy.html", "web/routes/policies.py")
    with pytest.raises(ValueError, match="web/routes/nope.py: no such route module"):
        page_files("leaderboard.html", "web/routes/nope.py")


def test_a_changed_or_missing_file_is_reported():
    recorded = {"web/static/app.css": file_hash("web/static/app.css"), "web/templates/base.html": "0" * 64,
                "web/templates/gone.html": "0" * 64}
    assert changed_since(recorded) == ["web/templates/base.html", "web/templates/gone.html"]


SMALL_LEAGUE = """name: pictures-check
seed: 1
matches_per_pair: 4
concurrency: 2
games:
  - id: tictactoe
policies:
  - name: bot
    spec: bot
  - name: random
    spec: random
"""


@pytest.mark.slow
def test_make_pictures_end_to_end_on_a_scripted_league(tmp_path):
    """The command itself, on a small scripted league instead of the demo (which plays the shipped
    model for minutes): every picture made under the app's CSP, a manifest the checks above pass,
    and docs/img untouched."""
    from tests.services import chromium

    chromium()  # skips, or fails under ARENA_REQUIRE_SERVICES=1, without the browser
    league = tmp_path / "league.yaml"
    league.write_text(SMALL_LEAGUE)
    before = {p.name: p.read_bytes() for p in IMG.iterdir()}
    out = tmp_path / "img"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "pictures.py"), "--league", str(league), "--policy", "bot",
                          "--card", "random", "--out", str(out), "--db", f"sqlite:///{tmp_path / 'pictures.db'}"],
                         capture_output=True, text=True, timeout=540, cwd=ROOT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    data = manifest(out)
    assert sorted(data["pictures"]) == ["leaderboard.png", "play.png", "policy.png", "report-card.png"]
    assert problems(out, data) == []
    assert data["pictures"]["leaderboard.png"]["page"] == "/?league=pictures-check"
    assert data["pictures"]["report-card.png"]["page"] == "/evals/random?suite=core-v1&quick=1"
    assert all((out / name).stat().st_size > 10_000 for name in data["pictures"])
    assert {p.name: p.read_bytes() for p in IMG.iterdir()} == before


def test_a_picture_older_than_its_page_or_replaced_fails_the_check():
    data = manifest()
    name, entry = next(iter(data["pictures"].items()))
    template = f"web/templates/{entry['template']}"
    older = {**data, "pictures": {name: {**entry, "files": {**entry["files"], template: "0" * 64}}}}
    assert problems(IMG, older) == [f"{name} is older than its page: {template} changed since it was taken"]
    replaced = {**data, "pictures": {name: {**entry, "sha256": "0" * 64}}}
    assert problems(IMG, replaced) == [f"{name}: not the picture pictures.json records (replaced by hand or by a test?)"]
