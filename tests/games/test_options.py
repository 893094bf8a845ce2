"""Native games' declared options: defaults validate, and unknown, out-of-range and ill-typed values
are refused with one line naming the game and the option; numbers may be given as text."""

from __future__ import annotations

import json

import pytest

from arena.game import GameError
from arena.game_options import Option
from games.registry import make_game, native_games, option_schema

GAMES = sorted(native_games())


def _declared() -> list[tuple[str, Option]]:
    return [(game_id, option) for game_id, cls in native_games().items() for option in cls.OPTIONS.options]


def _bad_values(option: Option) -> list[object]:
    """Values `option` must refuse whatever the other options are."""
    if option.kind == "int":
        return [int(option.high) + 1, int(option.low) - 1, True, "many", 2.5, None, [1]]
    if option.kind == "bool":
        return ["maybe", 2, 0.5, None]
    if option.kind == "int_list":
        return [[], [int(option.high) + 1], [int(option.low) - 1], "1,2,x", [True], [1] * (option.max_items + 1), 3]
    raise AssertionError(f"no bad values written for {option.kind}")


@pytest.mark.parametrize("game_id", GAMES)
def test_declared_defaults_validate_and_build(game_id: str) -> None:
    schema = native_games()[game_id].OPTIONS
    defaults = schema.defaults()
    assert make_game(game_id).options == defaults
    assert make_game(game_id, **defaults).options == defaults
    described = option_schema(game_id)
    json.dumps(described)  # servers and docs send it as it is
    assert [o["name"] for o in described["options"]] == list(schema.names)


@pytest.mark.parametrize("game_id", GAMES)
def test_unknown_option_is_named_with_the_known_ones(game_id: str) -> None:
    with pytest.raises(GameError, match="'colour'") as caught:
        make_game(game_id, colour="red")
    message = str(caught.value)
    assert message.startswith(game_id) and "\n" not in message
    names = native_games()[game_id].OPTIONS.names
    assert ("it takes " + ", ".join(names)) in message if names else "takes no options" in message


@pytest.mark.parametrize(
    "game_id,option,value",
    [(game_id, option.name, value) for game_id, option in _declared() for value in _bad_values(option)],
)
def test_out_of_range_and_ill_typed_values_are_refused_in_one_line(game_id: str, option: str, value: object) -> None:
    with pytest.raises(GameError) as caught:
        make_game(game_id, **{option: value})
    message = str(caught.value)
    assert message.startswith(f"{game_id}: option {option}=") and "\n" not in message and len(message) < 200


def test_refusals_name_the_allowed_range() -> None:
    with pytest.raises(GameError, match=r"^kuhn_poker: option hands=0: must be 1-1000$"):
        make_game("kuhn_poker", hands=0)
    with pytest.raises(GameError, match=r"^kuhn_poker: option hands=True: must be a whole number 1-1000$"):
        make_game("kuhn_poker", hands=True)
    with pytest.raises(GameError, match=r"^liars_dice: option wild_ones='maybe': must be true or false$"):
        make_game("liars_dice", wild_ones="maybe")
    with pytest.raises(GameError, match=r"^nim: option heaps=\[0, 3\]: item 1 \(0\) must be a whole number 1-50$"):
        make_game("nim", heaps=[0, 3])


def test_cross_field_rules_of_battleship() -> None:
    with pytest.raises(GameError, match="option fleet=\\[5\\]: no ship may be longer than the grid is wide \\(4\\)"):
        make_game("battleship", size=4, fleet=[5])
    with pytest.raises(GameError, match="option fleet=.*: ships of 10 cells do not fit: at most 8 on a 4x4 grid"):
        make_game("battleship", size=4, fleet=[4, 3, 3])
    assert make_game("battleship", size=4, fleet=[4, 4]).options == {"size": 4, "fleet": [4, 4]}


def test_numeric_text_options_are_accepted() -> None:
    assert make_game("kuhn_poker", hands="2").options == {"hands": 2}
    assert make_game("kuhn_poker", hands=2.0).options == {"hands": 2}
    assert make_game("nim", heaps="1, 2,3").options == {"heaps": [1, 2, 3]}
    assert make_game("liars_dice", wild_ones="yes").options == {"dice": 5, "wild_ones": True}


def test_options_the_examples_use_still_work() -> None:
    # examples/train-kuhn-choice-cpu.yaml, examples/train-leduc-choice-cpu.yaml
    assert make_game("kuhn_poker", hands=1).options == {"hands": 1}
    assert make_game("leduc_holdem", hands=1).options == {"hands": 1}
    assert make_game("liars_dice", 3).options == {"dice": 5, "wild_ones": False}


def test_docs_list_every_native_option() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "games.md").read_text()
    for game_id, option in _declared():
        assert f"| `{game_id}` | `{option.name}` | " in text, f"docs/games.md: no row for {game_id} {option.name}"
