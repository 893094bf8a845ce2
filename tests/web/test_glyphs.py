"""Pages render with plain text fonts: no character that needs an emoji or symbol font (Debian's
Chromium without fonts-noto-color-emoji draws the media-control characters as empty boxes)."""

from __future__ import annotations

from pathlib import Path

import web

NEEDS_A_SYMBOL_FONT = [(0x2300, 0x23FF), (0x2B00, 0x2BFF), (0x1F000, 0x1FAFF), (0xFE0F, 0xFE0F)]


def test_templates_and_scripts_use_no_emoji_glyphs():
    root = Path(web.__file__).parent
    found = []
    for path in sorted([*root.glob("templates/*.html"), *root.glob("static/*.js"), *root.glob("static/*.css")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [f"{path.name}:{number}: U+{ord(c):04X}" for c in line if any(lo <= ord(c) <= hi for lo, hi in NEEDS_A_SYMBOL_FONT)]
    assert not found, found


def test_replay_controls_have_their_icons(client):
    page = client.get("/matches/1").text
    assert page.count('class="icon"') == 3 and "first" in page and "last" in page and "pause" in page
