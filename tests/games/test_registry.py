"""The game registry is explicit (games.registry.NATIVE_GAMES, one line per game): a line whose
module or class is gone fails here, and so does a game module that has no line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from arena.game import GameError
from games.registry import NATIVE_GAMES, game_entry_class, native_games

GAMES_DIR = Path(__file__).resolve().parents[2] / "games"


def _declared_games() -> set[str]:
    """"module:Class" of every class in the games package that declares a game id (`id = "..."`),
    read from the source, so no module is imported to find out."""
    found = set()
    for path in sorted(GAMES_DIR.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and any(_assigns_an_id(statement) for statement in node.body):
                found.add(f"games.{path.stem}:{node.name}")
    return found


def _assigns_an_id(statement: ast.stmt) -> bool:
    target = statement.target if isinstance(statement, ast.AnnAssign) else (statement.targets[0] if isinstance(statement, ast.Assign) else None)
    value = getattr(statement, "value", None)
    return isinstance(target, ast.Name) and target.id == "id" and isinstance(value, ast.Constant) and bool(value.value)


@pytest.mark.parametrize("entry", NATIVE_GAMES)
def test_every_line_names_a_game_in_its_module(entry):
    cls = game_entry_class(entry)
    assert f"{cls.__module__}:{cls.__name__}" == entry


def test_every_game_module_has_its_line():
    assert _declared_games() == set(NATIVE_GAMES), "add the game's line to games.registry.NATIVE_GAMES (or remove a stale one)"
    assert len(native_games()) == len(NATIVE_GAMES)


@pytest.mark.parametrize("stale", ["games.gone:Gone", "games.nim:Gone", "games.registry:NATIVE_GAMES"])
def test_a_stale_line_says_what_is_wrong(stale):
    with pytest.raises(GameError, match="NATIVE_GAMES"):
        game_entry_class(stale)
