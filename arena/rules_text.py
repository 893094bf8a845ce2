"""Rules text as players read it: one normalisation at the source, for every game.

Native games write their rules as the class docstring, hard-wrapped at ~100 columns and indented;
TextArena games send them in the first message, sometimes from an indented triple-quoted string.
Models, the `?` help and SFT/DPO exports should get prose, not source layout: so the text is
dedented, lines that were wrapped are joined, and paragraphs, list items (with their own wrapped
continuations) and anything laid out on purpose (boards, tables, aligned columns) are kept.

A line counts as wrapped when it breaks a sentence: the next line goes on in lower case, or its
first word would not have fitted after it within the text's width (its longest line), which is
where a wrapper, or an author at a ruler, breaks. A break after a sentence's end (or a label's
colon) is kept: it reads the same either way, and short authored lines stay as written.
"""

from __future__ import annotations

import inspect
import re
from functools import lru_cache

MAX_WRAP_WIDTH = 120  # nobody hard-wraps wider: a text with longer lines was not wrapped
MIN_WRAP_WIDTH = 60  # nor narrower: short lines are written one by one
_SENTENCE_END = re.compile(r"""(?<!\be\.g)(?<!\bi\.e)(?<!\betc)(?<!\bvs)[.!?]["')`*]*$""")
_CLAUSE_END = re.compile(r"""[:;]["')`*]*$""")
_LIST_ITEM = re.compile(r"^(\s*)([-*+•]|\d{1,2}[.)]|[A-Za-z][.)])\s+")
_LAID_OUT = re.compile(r"[│┃┌┐└┘├┤┬┴┼─━|]|\S {2,}\S")  # board cells, tables, aligned columns


@lru_cache(maxsize=512)
def normalise_rules(text: str) -> str:
    """Dedented rules with wrapped lines joined; paragraphs, lists and layouts kept."""
    lines = [line.rstrip() for line in inspect.cleandoc(text.expandtabs(4)).splitlines()]
    width = max((len(line) for line in lines), default=0)
    paragraphs: list[list[str]] = [[]]
    previous = ""  # the source line before this one (joined output lines are longer)
    for line in lines:
        if not line:
            if paragraphs[-1]:
                paragraphs.append([])
        elif paragraphs[-1] and width <= MAX_WRAP_WIDTH and _continues(paragraphs[-1][-1], previous, line, width):
            paragraphs[-1][-1] = f"{paragraphs[-1][-1]} {line.strip()}"
        else:
            paragraphs[-1].append(line)
        previous = line
    return "\n\n".join("\n".join(p) for p in paragraphs if p)


def _continues(joined: str, previous: str, line: str, width: int) -> bool:
    """Was `line` wrapped off the end of `previous`, the last source line of `joined`?"""
    if _LIST_ITEM.match(line) or _LAID_OUT.search(line.strip()) or _LAID_OUT.search(previous.strip()):
        return False
    item = _LIST_ITEM.match(joined)  # the output line says whether we are inside a list item
    if item:  # a line indented under a list item is that item's text
        return _indent(line) > _indent(joined)
    if _indent(line) != _indent(joined) or _indent(line) > 0:
        return False  # an indented block (a legend, examples) or a change of indent: layout
    first_word = line.split()[0]
    if _SENTENCE_END.search(previous):
        return False
    goes_on = first_word[0].islower() or first_word[0] in '"`('  # the sentence goes on
    if _CLAUSE_END.search(previous):  # "Rules:" before a new line of its own, or a wrapped clause
        return goes_on
    return goes_on or (width >= MIN_WRAP_WIDTH and len(previous) + 1 + len(first_word) > width)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())
