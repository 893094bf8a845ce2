"""One client's environment: a SeatSession behind OpenEnv's reset/step/state, plus the server's
rules on which opponents may be asked for (they spend the server's compute) and where finished
episodes go."""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from arena.match import MatchRecord
from arena.policy import Policy, PolicySpec, PolicySpecError, make_policy
from arena.seat_environment import SeatSession, SessionError
from games.registry import make_game
from serve_env.protocol import GameAction, GameState, ResetParams, observation_payload

log = logging.getLogger(__name__)

# `human` would read the server's terminal: never servable, whatever --allow says.
NEVER_SERVED = frozenset({"human"})
DEFAULT_ALLOWED = ("bot", "random")

NamedPolicy = Callable[[str], Policy | None]  # a league policy by name, or None when there is none
EpisodeRecorder = Callable[[MatchRecord], str | None]  # stores a finished episode; returns its match id


@dataclass
class ServeConfig:
    """What the server decides for every session."""

    game: str = "tictactoe"  # used when a reset names no game (OpenEnv's validator, TRL factories)
    opponents: list[str] = field(default_factory=list)  # used when a reset names no opponents
    allowed_kinds: frozenset[str] = frozenset(DEFAULT_ALLOWED)
    named_policy: NamedPolicy | None = None
    recorder: EpisodeRecorder | None = None
    reserved_names: Callable[[str], str | None] | None = None  # why a client may not use a name
    opponent_timeout: float = 60.0
    max_sessions: int = 64
    idle_timeout: float = 300.0
    max_message_bytes: int = 64 * 1024


class PolicyPool:
    """One policy object per spec for the whole server, as a league shares one per entry: a `local`
    or `hf` opponent loads its model once and batches the moves of concurrent sessions."""

    def __init__(self, config: "ServeConfig") -> None:
        self.config = config
        self._policies: dict[str, Policy] = {}

    MAX_SPECS = 64  # each distinct spec may hold a model: clients must not make the server load unboundedly many

    def get(self, spec: str) -> Policy:
        policy = self._policies.get(spec)
        if policy is None:
            if len(self._policies) >= self.MAX_SPECS:
                raise PolicySpecError(f"this server already serves {self.MAX_SPECS} distinct opponent specs; reuse one of them")
            policy = self._policies[spec] = self._build(spec)
        return policy

    def _build(self, spec: str) -> Policy:
        named = self.config.named_policy(spec) if self.config.named_policy else None
        if named is not None:
            return named
        kind = PolicySpec.parse(spec).kind
        if kind in NEVER_SERVED or kind not in self.config.allowed_kinds:
            allowed = ", ".join(sorted(self.config.allowed_kinds - NEVER_SERVED)) or "none"
            raise PolicySpecError(f"policy kind {kind!r} is not served here (allowed: {allowed}; the server's --allow adds kinds)")
        return make_policy(spec)

    async def close(self) -> None:
        policies, self._policies = list(self._policies.values()), {}
        for policy in policies:
            try:
                await policy.close()
            except Exception as exc:  # shutting down: report and go on closing the rest
                log.warning("closing %s failed: %s", policy.spec, exc)


class ArenaEnvironment:
    """The environment one WebSocket connection (or one stateless HTTP call) talks to."""

    def __init__(self, config: ServeConfig, pool: PolicyPool) -> None:
        self.config = config
        self.session = SeatSession(make_game=make_game, resolve_policy=pool.get, opponent_timeout=config.opponent_timeout, owns_opponents=False)
        self.episode_id: str | None = None
        self.step_count = 0
        self.seed = 0
        self.match_id: str | None = None

    async def reset(self, data: dict[str, Any]) -> dict[str, Any]:
        params = ResetParams.model_validate(data)
        name = params.name or "client"
        if self.config.reserved_names is not None and params.name:
            why = self.config.reserved_names(name)
            if why:
                raise SessionError(why)
        self.session.name = name
        self.seed = params.seed if params.seed is not None else random.SystemRandom().randrange(2**31)
        opponents = params.opponents if params.opponents is not None else list(self.config.opponents)
        view = await self.session.reset(
            params.game or self.config.game, seed=self.seed, seat=params.seat, options=params.options,
            opponents=opponents, num_players=params.num_players,
        )
        self.episode_id = params.episode_id or uuid.uuid4().hex
        self.step_count, self.match_id = 0, None
        return observation_payload(view, self.seed)

    async def step(self, data: dict[str, Any]) -> dict[str, Any]:
        action = GameAction.model_validate(data)
        view = await self.session.step(action.move)
        self.step_count += 1
        if view.done:
            await self._store()
        return observation_payload(view, self.seed, self.match_id)

    def state(self) -> dict[str, Any]:
        state = GameState(episode_id=self.episode_id, step_count=self.step_count, **self.session.state())
        return state.model_dump()

    async def close(self) -> None:
        await self.session.close()

    async def _store(self) -> None:
        record = self.session.record
        # A hot-seat episode is the client against itself: nothing to rate.
        if self.config.recorder is None or record is None or self.session.hot_seat or record.outcome is None:
            return
        try:
            self.match_id = await asyncio.to_thread(self.config.recorder, record)
        except Exception as exc:  # storage trouble must not cost the client its episode
            log.warning("could not store the finished episode %s: %s", record.match_id, exc)
