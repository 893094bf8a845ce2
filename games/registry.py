"""One registry of games, with ids users can type.

Native games are discovered: every module in the `games` package that defines a `Game` subclass
with an `id` is registered, so adding a game is adding one module. TextArena games are reached by
`textarena:EnvId-v0` and resolved by the adapter (`games.textarena_adapter`), imported only when
one is asked for (TextArena is slow to import). `UnknownGameError` lives in arena.game and is
re-exported here, where callers look for it.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import pkgutil
from functools import lru_cache
from typing import Any

from arena.game import Game, GameError, GameInfo, UnknownGameError

TEXTARENA_PREFIX = "textarena:"
_NOT_GAME_MODULES = {"registry", "textarena_adapter", "bots", "conformance"}  # helpers, not games: never imported to look for one


def normalise_id(game_id: str) -> str:
    return game_id.strip().lower().replace("-", "_").replace(" ", "_")


@lru_cache(maxsize=1)
def native_games() -> dict[str, type[Game]]:
    """id -> class for every native game, discovered from the modules of this package."""
    import games

    found: dict[str, type[Game]] = {}
    for module_info in pkgutil.iter_modules(games.__path__):
        if module_info.name.startswith("_") or module_info.name in _NOT_GAME_MODULES:
            continue
        module = importlib.import_module(f"games.{module_info.name}")
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, Game) and obj.__module__ == module.__name__ and obj.id and not inspect.isabstract(obj):
                if obj.id in found:
                    raise GameError(f"two games share the id {obj.id!r}")
                found[obj.id] = obj
    return dict(sorted(found.items()))


def list_games(include_unavailable: bool = False, include_textarena: bool = True) -> list[GameInfo]:
    infos = [cls.info() for cls in native_games().values()]
    if include_textarena:
        from games import textarena_adapter

        infos += [
            info for info in textarena_adapter.game_infos() if info.available or include_unavailable
        ]
    return infos


def make_game(game_id: str, num_players: int | None = None, **options: Any) -> Game:
    """Build a game by id (`tictactoe`, `textarena:ConnectFour-v0`). Not reset yet."""
    if game_id.startswith(TEXTARENA_PREFIX):
        from games import textarena_adapter

        return textarena_adapter.make(game_id[len(TEXTARENA_PREFIX) :], num_players, **options)
    cls = native_games().get(normalise_id(game_id))
    if cls is None:
        raise UnknownGameError(unknown_game_message(game_id))
    return cls(num_players, **options)


def game_class(game_id: str) -> type[Game] | None:
    return native_games().get(normalise_id(game_id))


def unknown_game_message(game_id: str) -> str:
    candidates = list(native_games())
    close = difflib.get_close_matches(normalise_id(game_id), candidates, n=3, cutoff=0.4)
    if not close:
        # TextArena ids are matched on their readable part: "connectfour" ~ "ConnectFour-v0".
        from games import textarena_adapter

        names = {i.id[len(TEXTARENA_PREFIX) :].lower(): i.id for i in textarena_adapter.game_infos()}
        close = [names[n] for n in difflib.get_close_matches(game_id.lower(), list(names), n=3, cutoff=0.5)]
    hint = f"; did you mean {', '.join(close)}?" if close else "; run `arena games` for the list"
    return f"unknown game {game_id!r}{hint}"
