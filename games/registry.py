"""One registry of games, with ids users can type.

Native games are registered explicitly, one line each in NATIVE_GAMES (as OpenSpiel's
`register_game`): adding a game is its module plus its line here, and the list says at a glance what
ships. tests/games/test_registry.py fails on a line whose module or class is gone and on a game
module that has no line. TextArena games are reached by `textarena:EnvId-v0` and resolved by the
adapter (`games.textarena_adapter`), imported only when one is asked for (TextArena is slow to
import). `UnknownGameError` lives in arena.game and is re-exported here, where callers look for it.

Options: every game declares the options it takes (arena.game_options; TextArena's in
games/textarena_options.py) and its constructor validates them, so every caller of `make_game`
(league configs, `arena play`, the servers) gets the same one-line refusal for an undeclared
option or a value out of range. `option_schema(game_id)` describes them for servers and docs.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from functools import lru_cache
from typing import Any

from arena.game import Game, GameError, GameInfo, UnknownGameError
from arena.game_options import OptionSchema

TEXTARENA_PREFIX = "textarena:"

# Every native game, "module:Class", one line each.
NATIVE_GAMES = (
    "games.battleship:Battleship",
    "games.chess_game:Chess",
    "games.connect_four:ConnectFour",
    "games.kuhn_poker:KuhnPoker",
    "games.leduc_holdem:LeducHoldem",
    "games.liars_dice:LiarsDice",
    "games.negotiation:Negotiation",
    "games.nim:Nim",
    "games.pig:Pig",
    "games.prisoners_dilemma:PrisonersDilemma",
    "games.sealed_bid_auction:SealedBidAuction",
    "games.tictactoe:TicTacToe",
)


def normalise_id(game_id: str) -> str:
    return game_id.strip().lower().replace("-", "_").replace(" ", "_")


@lru_cache(maxsize=1)
def native_games() -> dict[str, type[Game]]:
    """id -> class for every native game in NATIVE_GAMES (imported on first use)."""
    found: dict[str, type[Game]] = {}
    for entry in NATIVE_GAMES:
        cls = game_entry_class(entry)
        if cls.id in found:
            raise GameError(f"two games share the id {cls.id!r}")
        found[cls.id] = cls
    return dict(sorted(found.items()))


def game_entry_class(entry: str) -> type[Game]:
    """The class a NATIVE_GAMES line names; GameError says what is wrong with a stale line."""
    module_name, _, class_name = entry.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise  # the game's module exists but needs something missing: that error says what
        raise GameError(f"games.registry.NATIVE_GAMES: {entry!r}: no module {module_name}") from None
    cls = getattr(module, class_name, None)
    if not (inspect.isclass(cls) and issubclass(cls, Game) and cls.id and not inspect.isabstract(cls)):
        raise GameError(f"games.registry.NATIVE_GAMES: {entry!r} names no Game subclass with an id")
    return cls


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


def option_schema(game_id: str) -> dict[str, Any]:
    """The options `game_id` takes, JSON-able: {"options": [{name, type, default, description,
    allowed, ...}], "checks": [rules between options]}. Reads declarations only (no TextArena import),
    so a `textarena:` id TextArena does not know lists no options here; `make_game` refuses it."""
    if game_id.startswith(TEXTARENA_PREFIX):
        from games.textarena_options import schema_for

        return schema_for(game_id[len(TEXTARENA_PREFIX) :]).describe()
    cls = native_games().get(normalise_id(game_id))
    if cls is None:
        raise UnknownGameError(unknown_game_message(game_id))
    declared = getattr(cls, "OPTIONS", None)  # every NativeGame declares; a bare Game takes none
    return (declared if isinstance(declared, OptionSchema) else OptionSchema()).describe()


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
