"""Rules text reaches players as prose: dedented, wrapped lines joined, paragraphs, lists and
layouts kept. Checked for the normaliser itself and for the rules of every playable game."""

from __future__ import annotations

import re

import pytest

from arena.rules_text import normalise_rules
from games.registry import list_games, make_game

DOCSTRING = """Nim for two players.

    There are several heaps of objects (3, 4 and 5 unless the table was set up otherwise), and the
    player who takes the last object wins; e.g.
    `2 3` takes 3 objects from heap 2.
    Moves (write exactly one word):
      - `check`: pass without betting (only while nobody has bet in this round). If both players
        check, the round ends.
      - `fold`: give up the hand.
    If both players check, the higher card wins.

         0 | 1 | 2
         3 | 4 | 5

    Invalid moves get feedback.
    """


def test_docstrings_are_dedented_joined_and_keep_paragraphs_lists_and_boards():
    assert normalise_rules(DOCSTRING) == (
        "Nim for two players.\n\n"
        "There are several heaps of objects (3, 4 and 5 unless the table was set up otherwise), and the "
        "player who takes the last object wins; e.g. `2 3` takes 3 objects from heap 2.\n"
        "Moves (write exactly one word):\n"
        "  - `check`: pass without betting (only while nobody has bet in this round). If both players "
        "check, the round ends.\n"
        "  - `fold`: give up the hand.\n"
        "If both players check, the higher card wins.\n\n"
        "     0 | 1 | 2\n"
        "     3 | 4 | 5\n\n"
        "Invalid moves get feedback."
    )


def test_short_authored_lines_and_legends_stay_as_written():
    text = "Welcome!\nGoal: win.\nCard Points: A=11, K=4\nGrid symbols:\n  'H' = Hole\n  'G' = Goal\n\n\n\nBye."
    assert normalise_rules(text) == "Welcome!\nGoal: win.\nCard Points: A=11, K=4\nGrid symbols:\n  'H' = Hole\n  'G' = Goal\n\nBye."


def _playable_ids() -> list[str]:
    return [info.id for info in list_games()]


_LIST_OR_LAYOUT = re.compile(r"^\s*([-*+•]|\d{1,2}[.)]|[A-Za-z][.)])\s|[│┌├└─|]|\S {2,}\S")


@pytest.mark.slow
def test_every_games_rules_are_normalised_prose():
    """Native docstrings and TextArena first messages alike (`?` help, prompts, exports read them)."""
    for game_id in _playable_ids():
        game = make_game(game_id)
        game.reset(0)
        rules = game.rules
        assert rules and rules == normalise_rules(rules), game_id
        assert rules == rules.strip() and "\n\n\n" not in rules, game_id
        lines = rules.splitlines()
        for line in lines:
            assert line == line.rstrip(), (game_id, line)
            if game.source == "native" and not _LIST_OR_LAYOUT.search(line):
                assert not line.startswith(" "), (game_id, line)  # no docstring indentation left
        for before, after in zip(lines, lines[1:]):
            # a sentence wrapped onto the next line (it goes on in lower case) was joined
            if before and after and not _LIST_OR_LAYOUT.search(after) and not after.startswith(" "):
                assert not (after[0].islower() and before[-1].isalpha()), (game_id, before, after)
