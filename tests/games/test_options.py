"""Option handling shared by the native games: unknown names and bad values are refused with one
line naming them, and numbers may be given as text."""

import pytest

from arena.game import GameError
from games.registry import make_game


GAMES = ("connect_four", "kuhn_poker", "leduc_holdem", "nim", "prisoners_dilemma")


@pytest.mark.parametrize("game_id", GAMES)
def test_unknown_option_is_named(game_id: str) -> None:
    with pytest.raises(GameError, match="'colour'"):
        make_game(game_id, colour="red")


@pytest.mark.parametrize(
    "game_id,options",
    [
        ("kuhn_poker", {"hands": 0}),
        ("kuhn_poker", {"hands": True}),
        ("leduc_holdem", {"hands": "many"}),
        ("nim", {"heaps": [0, 3]}),
        ("nim", {"heaps": []}),
        ("nim", {"heaps": "1,2,x"}),
        ("prisoners_dilemma", {"rounds": 2.5}),
    ],
)
def test_bad_option_values_are_refused(game_id: str, options: dict) -> None:
    name = next(iter(options))
    with pytest.raises(GameError, match=name):
        make_game(game_id, **options)


def test_numeric_text_options_are_accepted() -> None:
    assert make_game("kuhn_poker", hands="2").options == {"hands": 2}
    assert make_game("nim", heaps="1, 2,3").options == {"heaps": [1, 2, 3]}
