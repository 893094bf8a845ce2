"""Writes an outside-driven episode (verifiers, GEM) into a league store, through the league's
own Store API, so its outcome sits beside league matches and can be checked against what an
outside tool reported. The seat the outside model played is stored under the name it was given."""

from __future__ import annotations

from arena.match import MatchRecord
from games.registry import make_game
from league.scheduling import Pairing
from league.store import Store

DEFAULT_LEAGUE = "outside-episodes"


def store_episode(url: str, record: MatchRecord, league: str = DEFAULT_LEAGUE) -> int | None:
    """Append one finished episode; returns its match row id (None if that episode, keyed by its
    match id, was stored already: a replayed episode is never counted twice)."""
    game = make_game(record.game_id, record.num_players, **record.game_options)
    with Store(url) as store:
        league_id = store.open_league(league)
        store.upsert_game(game.id, game.name, game.rules)
        for name, spec in zip(record.policies, record.specs):
            store.upsert_policy(name, spec)
        pairing = Pairing(record.match_id, record.game_id, tuple(record.policies), record.seed)
        store.launch(league_id, [pairing], [pairing.key])
        return store.finish(league_id, pairing.key, record)
