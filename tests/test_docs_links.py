"""Every link in README.md and docs/ leads to a file of this repository, and every `#anchor` to a
heading of the page it names: a link to a file outside the repository (`../shared/...`) or to
the web breaks for a reader of a clone, and a renamed heading breaks the links to it silently.
The reference pages (README.md, docs/*.md) name only repository files that exist, so a moved
module cannot leave its old path behind; docs/experiments/ quotes commands as they were run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
REFERENCE_PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TOP_LEVEL = "arena|arena_verifiers|games|league|evaluation|trainer|web|serve_env|serve_model|interop|llm_arena_cli|bench|tests|scripts|examples|docs"
REPO_PATH = re.compile(rf"(?<![\w/.-])((?:{TOP_LEVEL})/[\w./-]*\.(?:py|md|yaml|sh|html|png|json))")

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")  # [text](target "title"), ![alt](image)
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]*)\"", re.I)
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def link_targets(text: str) -> list[str]:
    """The targets of the page's markdown and HTML links, code blocks and code spans left out."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    return [m.group(1) for pattern in (LINK, HTML_LINK) for m in pattern.finditer(prose)]


def anchors(text: str) -> set[str]:
    """The anchors GitHub gives the page's headings: lower case, punctuation dropped, spaces as
    hyphens, a repeated heading suffixed -1, -2, ..."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for heading in HEADING.findall(FENCE.sub("", text)):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """One line per link of `page` that leaves the repository or leads nowhere."""
    broken = []
    for target in link_targets(page.read_text(encoding="utf-8")):
        where, _, anchor = target.partition("#")
        if re.match(r"[a-zA-Z][\w+.-]*:|//", target):
            broken.append(f"{target}: leaves the repository (name the page or package in words instead)")
            continue
        destination = (page.parent / where).resolve() if where else page
        if not destination.is_relative_to(root):
            broken.append(f"{target}: outside the repository")
        elif not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination.read_text(encoding="utf-8")):
            broken.append(f"{target}: no heading with that anchor in {destination.relative_to(root)}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_link_leads_into_the_repository(page):
    broken = broken_links(page)
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)


@pytest.mark.parametrize("page", REFERENCE_PAGES, ids=[p.relative_to(ROOT).as_posix() for p in REFERENCE_PAGES])
def test_every_repository_file_a_page_names_exists(page):
    gone = sorted({path for path in REPO_PATH.findall(page.read_text(encoding="utf-8")) if "NAME" not in path and not (ROOT / path).exists()})
    assert not gone, f"{page.relative_to(ROOT)} names files that do not exist: {', '.join(gone)}"


def test_the_checker_finds_each_kind_of_broken_link(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## The `bench.x` table (2 cores)\n## Twice\n## Twice\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "[ok](other.md) [ok](other.md#the-benchx-table-2-cores) [ok](other.md#twice-1) [ok](#local)\n"
        "# Local\n"
        "[a](../../outside.md) [b](missing.md) [c](other.md#nope) [d](https://example.org) <img src=\"gone.png\">\n"
        "`[not a link](nowhere.md)`\n```\n[not a link](nowhere.md)\n```\n"
    )
    assert [line.split(":")[0] for line in broken_links(page, tmp_path)] == [
        "../../outside.md", "missing.md", "other.md#nope", "https", "gone.png",
    ]
