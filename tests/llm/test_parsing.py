"""Finding the move in free text, tool arguments and JSON replies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.llm.parsing import MAX_FREE_TEXT_CHARS, parse_move, parse_structured

CELLS = [str(i) for i in range(9)]
UCI = ["e2e4", "d2d4", "g1f3"]


@pytest.mark.parametrize(
    "reply, legal, expected, method",
    [
        ("I play [4].", CELLS, "4", "bracket"),
        ("[ E2E4 ]", UCI, "e2e4", "bracket"),
        ("Maybe [e2e4]... no, final answer: [d2d4]", UCI, "d2d4", "bracket"),
        ("Thinking [x] then [move: 7]", CELLS, "7", "bracket"),
        ("[raise 3]", ["raise 3", "3", "call"], "raise 3", "bracket"),  # 3 inside raise 3 is not a second move
        ("<think>4 is tempting, or 8</think> I choose [0]", CELLS, "0", "bracket"),
        ("[e9e9]", UCI, "e9e9", "unmatched"),  # the game explains why, the model sees it
        ("[Nf3]", UCI, "Nf3", "unmatched"),  # a notation the game may still accept
        ("[1, 2, 5, 6, 7]", CELLS, "1, 2, 5, 6, 7", "unmatched"),  # several moves are not one move
        ("", CELLS, "", "empty"),
    ],
)
def test_parse_move(reply, legal, expected, method):
    for lenient in (False, True):  # bracketed answers read the same either way
        parsed = parse_move(reply, legal, lenient=lenient)
        assert (parsed.action, parsed.method) == (expected, method)


# Replies from `arena play tictactoe -p local -p bot --seed 2` that the old parser took as moves.
UNMEANT = [
    "1, 2, 5, 6, 7\n\nA valid move: 1, 2, 5, 6, 7",
    "You have effectively moved to the cell (1,2) in the 4th row...",
    "I'd take the centre, cell 4",
    "<think>only 5 here</think> no idea",
]


@pytest.mark.parametrize("reply", UNMEANT)
def test_strict_parse_refuses_replies_without_a_bracketed_move(reply):
    parsed = parse_move(reply, CELLS)
    assert parsed.method == "unformatted" and not parsed.matched
    assert parsed.rejection == "no move in square brackets; reply with exactly one legal move in square brackets, for example [0]"


@pytest.mark.parametrize(
    "reply, legal, expected",
    [
        ("I'd take the centre, cell 4", CELLS, "4"),
        ("e2 e4 or g1 f3? G1F3 it is", UCI, "g1f3"),
        ("cell 14 is not a thing; 2 then", CELLS, "2"),  # no 4 or 1 inside 14
        ("I raise 3", ["raise 3", "3", "call"], "raise 3"),  # longer wins at the same end
        ("CALL!", ["fold", "call"], "call"),
    ],
)
def test_lenient_parse_takes_the_last_mention(reply, legal, expected):
    parsed = parse_move(reply, legal, lenient=True)
    assert (parsed.action, parsed.method, parsed.rejection) == (expected, "mention", None)


def test_lenient_parse_hands_other_text_to_the_game():
    parsed = parse_move("Nf3", UCI, lenient=True)
    assert (parsed.action, parsed.method, parsed.rejection) == ("Nf3", "unmatched", None)


def test_free_text_games_get_the_reply_capped():
    parsed = parse_move("  [Offer] 3 wood for 2 sheep  ", None)
    assert (parsed.action, parsed.method) == ("[Offer] 3 wood for 2 sheep", "free_text")
    assert len(parse_move("x" * 50_000, None).action) == MAX_FREE_TEXT_CHARS


def test_unmatched_replies_are_capped():
    assert len(parse_move("blah " * 10_000, CELLS).action) <= 200
    assert len(parse_move("blah " * 10_000, CELLS, lenient=True).action) <= 200


def test_structured_arguments_and_fallbacks():
    assert parse_structured('{"move": "E2E4"}', None, UCI).action == "e2e4"
    assert parse_structured(None, 'Sure! {"move": 4}', CELLS).action == "4"
    # a provider that ignored the schema: prose is parsed like text mode
    fallback = parse_structured(None, "I will play [g1f3]", UCI)
    assert (fallback.action, fallback.method) == ("g1f3", "bracket")
    garbage = parse_structured(None, "{]]@@ %% ~", CELLS)
    assert garbage.method == "unformatted" and garbage.rejection and len(garbage.action) <= 200
    # a JSON move that is not one of the enumerated ones goes to the game (strict), or is searched (lenient)
    assert parse_structured('{"move": "cell 4"}', None, CELLS).method == "unmatched"
    assert parse_structured('{"move": "cell 4"}', None, CELLS, lenient=True).action == "4"


def test_code_is_never_evaluated():
    reply = "__import__('os').system('touch /tmp/arena_pwned') [4]"
    assert parse_move(reply, CELLS).action == "4"
    assert parse_structured('{"move": "__import__(\'os\')"}', None, CELLS).action == "__import__('os')"


@settings(max_examples=200, deadline=None)
@given(
    st.text(max_size=400),
    st.lists(st.sampled_from(CELLS + UCI + ["call", "raise 3"]), min_size=1, max_size=8, unique=True),
    st.booleans(),
)
def test_parse_move_is_total_and_returns_legal_moves_when_matched(reply, legal, lenient):
    parsed = parse_move(reply, legal, lenient=lenient)
    assert isinstance(parsed.action, str) and len(parsed.action) <= 2000
    if parsed.matched:
        assert parsed.action in legal
    if not lenient and "[" not in reply:
        assert not parsed.matched and parsed.rejection
