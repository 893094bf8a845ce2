"""One client's environment: a SeatEnvironment behind OpenEnv's reset/step/state, plus what the server
decides for every session: its defaults, which opponents may be asked for (the rules every server
for outsiders applies: league.opponent_pool) and where finished episodes go."""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from dataclasses import dataclass, field
from typing import Any

from arena.game_guard import DEFAULT_GAME_CALL_TIMEOUT
from arena.seat_environment import DEFAULT_MAX_VIEW_BYTES, GameFactory, SeatEnvironment, SeatEnvironmentError
from games.registry import make_game
from league.opponent_pool import SCRIPTED_KINDS, OpponentPool
from league.outside_play import OutsidePlay
from serve_env.protocol import GameAction, GameState, ResetParams, observation_payload

log = logging.getLogger(__name__)

ALLOW_HINT = "the server's --allow adds kinds"


@dataclass
class ServeConfig:
    """What the server decides for every session."""

    game: str = "tictactoe"  # used when a reset names no game (OpenEnv's validator, TRL factories)
    opponents: list[str] = field(default_factory=list)  # used when a reset names no opponents
    allowed_kinds: frozenset[str] = SCRIPTED_KINDS
    outside: OutsidePlay | None = None  # with a store (--db): league policies by name, finished episodes stored
    opponent_timeout: float = 60.0
    max_sessions: int = 64
    idle_timeout: float = 300.0
    max_message_bytes: int = 64 * 1024
    bind_host: str = "127.0.0.1"  # the names a Host header may carry follow from it (server_guards.origins)
    allowed_hosts: list[str] = field(default_factory=list)  # more Host names (--allowed-host)
    allowed_origins: list[str] = field(default_factory=list)  # cross-site origins allowed (--allow-origin)
    max_sessions_per_client: int = 8
    max_reply_bytes: int = 1024 * 1024
    game_call_timeout: float = DEFAULT_GAME_CALL_TIMEOUT
    max_view_bytes: int = DEFAULT_MAX_VIEW_BYTES
    game_factory: GameFactory = make_game  # the games offered (tests inject misbehaving ones)

    def opponent_pool(self) -> OpponentPool:
        """The server's opponents. League policies are played whatever their kind: the league's
        owner registered them (docs/openenv.md)."""
        return OpponentPool(self.allowed_kinds, outside=self.outside, trust_league_policies=True, allow_hint=ALLOW_HINT)


class ArenaEnvironment:
    """The environment one WebSocket connection (or one stateless HTTP call) talks to."""

    def __init__(self, config: ServeConfig, pool: OpponentPool) -> None:
        self.config = config
        self.seat_environment = SeatEnvironment(
            make_game=config.game_factory, resolve_policy=pool.get, opponent_timeout=config.opponent_timeout, owns_opponents=False,
            game_call_timeout=config.game_call_timeout, max_view_bytes=config.max_view_bytes,
        )
        self.episode_id: str | None = None
        self.step_count = 0
        self.seed = 0
        self.match_id: str | None = None

    async def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        params = ResetParams.model_validate(data)
        name = params.name or "client"
        if self.config.outside is not None and params.name:
            why = self.config.outside.reserved(name)
            if why:
                raise SeatEnvironmentError(why)
        self.seat_environment.name = name
        self.seed = params.seed if params.seed is not None else random.SystemRandom().randrange(2**31)
        opponents = params.opponents if params.opponents is not None else list(self.config.opponents)
        view = await self.seat_environment.reset(
            params.game or self.config.game, seed=self.seed, seat=params.seat, options=params.options,
            opponents=opponents, num_players=params.num_players,
        )
        self.episode_id = params.episode_id or uuid.uuid4().hex
        self.step_count, self.match_id = 0, None
        return observation_payload(view, self.seed)

    async def step(self, data: dict[str, Any]) -> dict[str, Any]:
        action = GameAction.model_validate(data)
        view = await self.seat_environment.step(action.move)
        self.step_count += 1
        if view.done:
            await self._store()
        return observation_payload(view, self.seed, self.match_id)

    def state(self) -> dict[str, Any]:
        state = GameState(episode_id=self.episode_id, step_count=self.step_count, **self.seat_environment.state())
        return state.model_dump()

    async def close(self) -> None:
        await self.seat_environment.close()

    async def _store(self) -> None:
        record = self.seat_environment.record
        # A hot-seat episode is the client against itself: nothing to rate.
        if self.config.outside is None or record is None or self.seat_environment.hot_seat or record.outcome is None:
            return
        try:
            self.match_id = await asyncio.to_thread(self.config.outside.record, record)
        except Exception as exc:  # storage trouble must not cost the client its episode
            log.warning("could not store the finished episode %s: %s", record.match_id, exc)
