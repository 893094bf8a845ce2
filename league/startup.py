"""A league's start-up: check everything, build every policy, and only then write anything.

A failed start (a policy name registered with another spec, a bad parameter, a policy that cannot
be built, a changed schedule) must leave the store exactly as it was, so the user fixes the file
and runs it again under the same name. So the runner first reads (`check_start`: games built
once for their rules, the league's schedule and the policy names compared with the store), then
builds the policies (the executor's `start`), and only then writes the league, its games and its
policies in one transaction (`LeagueStart.register`), which re-checks inside the transaction in
case another process registered a name meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from games.registry import make_game
from league.config import LeagueConfig
from league.store import Store


@dataclass(frozen=True)
class LeagueStart:
    """What a league writes when it starts, gathered before anything is written."""

    name: str
    config: dict[str, Any]
    schedule_hash: str
    games: tuple[tuple[str, str, str], ...]  # (game id, name, rules)
    policies: tuple[tuple[str, str, dict[str, Any] | None], ...]  # (name, spec, notes or None)

    def register(self, store: Store) -> int:
        """Write the league, its games and its policies in one transaction; returns the league id."""
        return store.register_league(self.name, self.config, self.schedule_hash, self.games, self.policies)


def check_start(config: LeagueConfig, store: Store) -> LeagueStart:
    """Everything `register` will write, checked against the store without writing (StoreError
    names a changed schedule or a policy name clash; a game that cannot be built raises its own
    error)."""
    games = []
    for game in config.games:
        info = make_game(game.id, game.players, **game.options)
        games.append((game.id, info.name, info.rules))
    schedule_hash = config.schedule_hash()
    store.check_league(config.name, schedule_hash)
    store.check_policy_names([(entry.name, entry.spec) for entry in config.policies])
    # No notes in the league file leave the stored ones alone (e.g. a training checkpoint's run/step).
    policies = tuple((entry.name, entry.spec, entry.meta or None) for entry in config.policies)
    return LeagueStart(config.name, config.stored_config(), schedule_hash, tuple(games), policies)
