"""The declared-options API (arena.game_options) on its own: types, ranges, cross-field rules, the
one-line refusals and the JSON description."""

from __future__ import annotations

import json

import pytest

from arena.game import GameError
from arena.game_options import (
    CrossCheck,
    OptionSchema,
    bool_option,
    choice_option,
    float_option,
    int_list_option,
    int_option,
    str_option,
)

SCHEMA = OptionSchema(
    (
        int_option("rows", 8, 5, 16, "rows of the board"),
        int_option("cols", 8, 5, 16, "columns of the board"),
        int_option("mines", 10, 1, 85, "mines on the board"),
        float_option("ratio", 0.25, 0.1, 0.5, "a share"),
        bool_option("open", True, "show the board"),
        str_option("title", "game", 12, "a label"),
        choice_option("level", "easy", ("easy", "hard"), "puzzle set"),
        choice_option("target", 2048, (8, 2048), "tile that wins"),
        int_list_option("piles", (3, 4), 1, 20, 1, 3, "pile sizes"),
    ),
    (
        CrossCheck(
            "mines",
            "mines: at most a third of the cells",
            lambda v: None if v["mines"] <= v["rows"] * v["cols"] // 3 else f"at most {v['rows'] * v['cols'] // 3}",
        ),
    ),
)


def refusal(options: dict) -> str:
    with pytest.raises(GameError) as caught:
        SCHEMA.validate("demo", options)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 200, message
    return message


def test_defaults_are_filled_in_and_given_values_cleaned() -> None:
    assert SCHEMA.validate("demo", {}) == {
        "rows": 8, "cols": 8, "mines": 10, "ratio": 0.25, "open": True, "title": "game",
        "level": "easy", "target": 2048, "piles": [3, 4],
    }
    cleaned = SCHEMA.validate("demo", {"rows": "6", "ratio": "0.5", "open": "no", "level": "HARD", "target": "8", "piles": "1,2"})
    assert (cleaned["rows"], cleaned["ratio"], cleaned["open"], cleaned["level"], cleaned["target"], cleaned["piles"]) == (
        6, 0.5, False, "hard", 8, [1, 2],
    )
    assert SCHEMA.validate("demo", None)["rows"] == 8


@pytest.mark.parametrize(
    "options,expected",
    [
        ({"rows": 3}, "demo: option rows=3: must be 5-16"),
        ({"rows": True}, "demo: option rows=True: must be a whole number 5-16"),  # a bool is not a number
        ({"rows": 6.5}, "demo: option rows=6.5: must be a whole number 5-16"),
        ({"rows": "six"}, "demo: option rows='six': must be a whole number 5-16"),
        ({"ratio": False}, "demo: option ratio=False: must be a number 0.1-0.5"),
        ({"ratio": float("nan")}, "demo: option ratio=nan: must be a number 0.1-0.5"),
        ({"ratio": "inf"}, "demo: option ratio='inf': must be a number 0.1-0.5"),
        ({"ratio": 0.75}, "demo: option ratio=0.75: must be 0.1-0.5"),
        ({"open": 2}, "demo: option open=2: must be true or false"),
        ({"title": 5}, "demo: option title=5: must be text of at most 12 characters"),
        ({"title": "x" * 13}, "demo: option title='xxxxxxxxxxxxx': at most 12 characters, got 13"),
        ({"level": "medium"}, "demo: option level='medium': must be one of easy, hard"),
        ({"target": True}, "demo: option target=True: must be one of 8, 2048"),
        ({"piles": [1, 2, 3, 4]}, "demo: option piles=[1, 2, 3, 4]: must be a list of 1-3 whole numbers, each 1-20"),
        ({"piles": [1, 0]}, "demo: option piles=[1, 0]: item 2 (0) must be a whole number 1-20"),
        ({"rows": 5, "cols": 5, "mines": 9}, "demo: option mines=9: at most 8"),
    ],
)
def test_each_refusal_is_one_line_naming_the_option_and_what_is_allowed(options: dict, expected: str) -> None:
    assert refusal(options) == expected


def test_unknown_options_are_refused_naming_the_known_ones() -> None:
    message = refusal({"colour": 1})
    assert message == "demo: unknown option 'colour'; it takes rows, cols, mines, ratio, open, title, level, target, piles"
    many = refusal({f"extra{i}": i for i in range(50)})
    assert "and 45 more" in many
    assert "..." in refusal({"y" * 500: 1})
    assert OptionSchema().validate("plain", {}) == {}
    with pytest.raises(GameError, match="^plain takes no options, got 'size'$"):
        OptionSchema().validate("plain", {"size": 4})


def test_huge_and_odd_values_are_quoted_back_briefly() -> None:
    assert refusal({"rows": 10**5000}) == "demo: option rows=<a number too large to show>: must be 5-16"
    assert len(refusal({"piles": [10**5000]})) < 200
    assert len(refusal({"title": ["x"] * 10_000})) < 200
    with pytest.raises(GameError, match="options must be a mapping"):
        SCHEMA.validate("demo", [("rows", 5)])  # type: ignore[arg-type]


def test_declarations_that_contradict_themselves_are_refused_at_import() -> None:
    with pytest.raises(ValueError, match="default"):
        OptionSchema((int_option("n", 0, 1, 5, "a count"),))
    with pytest.raises(ValueError, match="declared twice"):
        OptionSchema((int_option("n", 1, 1, 5, "a"), int_option("n", 2, 1, 5, "b")))
    with pytest.raises(ValueError, match="undeclared"):
        OptionSchema((int_option("n", 1, 1, 5, "a"),), (CrossCheck("m", "m", lambda v: None),))


def test_the_description_is_json_and_complete() -> None:
    described = json.loads(json.dumps(SCHEMA.describe()))
    rows = described["options"][0]
    assert rows == {
        "name": "rows", "type": "int", "default": 8, "description": "rows of the board",
        "allowed": "a whole number 5-16", "min": 5, "max": 16,
    }
    by_name = {o["name"]: o for o in described["options"]}
    assert by_name["level"]["choices"] == ["easy", "hard"]
    assert by_name["piles"]["default"] == [3, 4] and by_name["piles"]["max_items"] == 3
    assert described["checks"] == ["mines: at most a third of the cells"]
