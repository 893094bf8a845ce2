"""The files a web page is made of: its route module, its template, the templates that one extends
or includes, and the static files (CSS, scripts) they load.

The pictures of the pages in README.md and docs/web.md record these files' content hashes when
they are taken (scripts/pictures.py writes docs/img/pictures.json); tests/web/test_pictures.py
recomputes them, so a picture older than the page it shows fails a test instead of misleading a
reader. Content hashes, not modification times: a git clone sets every file's time to the clone's.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, meta

from web.templating import HERE

ROOT = HERE.parent  # paths are given relative to the repository (or the install) root
STATIC_REF = re.compile(r"""["'(]/static/([A-Za-z0-9_.-]+)""")  # href="/static/app.css", src='/static/x.js'


def _templates(template: str) -> list[str]:
    """`template` and every template it extends or includes, transitively, first seen first."""
    env = Environment(loader=FileSystemLoader(str(HERE / "templates")), autoescape=True)
    found: list[str] = []
    pending = [template]
    while pending:
        name = pending.pop(0)
        if name in found:
            continue
        found.append(name)
        source = env.loader.get_source(env, name)[0]  # type: ignore[union-attr]
        # None stands for a name computed at render time: no page here does that, so refuse it.
        referenced = list(meta.find_referenced_templates(env.parse(source)))
        if None in referenced:
            raise ValueError(f"web/templates/{name}: extends or includes a template named at render time; list its files by hand")
        pending += [ref for ref in referenced if ref is not None]
    return found


def page_files(template: str, route: str) -> list[str]:
    """The repository paths a page rendered from `template` by the route module `route` (a path
    such as "web/routes/leaderboard.py") is made of, sorted."""
    if not (ROOT / route).is_file():
        raise ValueError(f"{route}: no such route module")
    files = {route}
    for name in _templates(template):
        path = HERE / "templates" / name
        files.add(path.relative_to(ROOT).as_posix())
        for static in STATIC_REF.findall(path.read_text(encoding="utf-8")):
            static_path = HERE / "static" / static
            if not static_path.is_file():
                raise ValueError(f"web/templates/{name}: loads /static/{static}, which does not exist")
            files.add(static_path.relative_to(ROOT).as_posix())
    return sorted(files)


def file_hash(path: str) -> str:
    """The SHA-256 of a repository file's bytes, hex."""
    return hashlib.sha256((ROOT / path).read_bytes()).hexdigest()


def changed_since(recorded: dict[str, str]) -> list[str]:
    """The paths of `recorded` ({path: SHA-256}) whose content is no longer what was recorded
    (or that are gone), sorted."""
    return sorted(path for path, digest in recorded.items() if not (ROOT / path).is_file() or file_hash(path) != digest)
