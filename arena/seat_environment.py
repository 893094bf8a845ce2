"""One seat of a match, stepped one move at a time by an outside caller.

Environment servers (OpenEnv, GEM, verifiers, the browser play page) need a game as
`reset() -> observation`, `step(move) -> observation`: one seat is the caller's, the other seats
are played in-process by policy specs until it is the caller's turn again. With no opponents the
caller plays every seat (hot-seat) and each view says whose turn it is.

This is not a second match driver: `SeatEnvironment` runs `arena.match.play_match` as a background
task and plays the caller's seats through a `Policy` whose `act` waits for the caller's next move.
Retries after invalid moves, forfeits, eliminations and simultaneous rounds are therefore exactly
the league's, and the finished `MatchRecord` is the same record a league stores.

Episodes are reproducible: the match id (which seeds `bot` and `random`) is derived from the game,
seed, seat, options and opponent specs, so the same reset gives the same episode.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from arena.game import Game
from arena.match import MAX_REPLY_CHARS, MatchRecord, TurnRecord, play_match
from arena.policy import MoveRequest, Policy, PolicyFailure, PolicyReply, make_policy
from arena.redaction import redact

PolicyResolver = Callable[[str], Policy]
GameFactory = Callable[..., Game]  # (game_id, num_players=None, **options) -> Game, e.g. games.registry.make_game
CLIENT_SPEC = "client"  # the spec recorded for seats the caller plays


class SeatEnvironmentError(Exception):
    """The caller did something the environment cannot do (bad game, seat, spec; move after the end).
    Its text goes to clients (serve-env, GEM, verifiers, the play page) and may quote a spec or a
    provider's error, so it is redacted here, once, whoever raises it."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


@dataclass
class SeatView:
    """What the caller sees after reset and after each move."""

    game_id: str
    seat: int  # the caller's seat (hot-seat: the seat whose score is the reward)
    player: int | None  # whose move the caller must send now; None once done
    role: str
    text: str  # that player's private view, as the game renders it
    legal_moves: list[str] | None  # None where moves are free text (or the episode is done)
    feedback: str | None  # why the caller's last move was rejected, if it was
    turn: int  # accepted moves so far
    attempt: int  # 0 on a fresh turn, 1.. after rejected moves
    done: bool
    reward: float | None  # the seat's outcome score once done, else None
    outcome: dict[str, Any] | None = None  # scores, ranks, reason once done
    status: str = "running"  # running | finished | aborted
    hot_seat: bool = False
    rules: str = ""  # filled on the reset view only: the rules never change within an episode

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _ClientSeat(Policy):
    """The caller's seat(s): `act` parks the request until the caller sends a move."""

    provider = "client"

    def __init__(self, environment: "SeatEnvironment", name: str) -> None:
        self.environment = environment
        self.name = name
        self.spec = CLIENT_SPEC

    async def act(self, request: MoveRequest) -> PolicyReply:
        future: asyncio.Future[PolicyReply] = asyncio.get_running_loop().create_future()
        self.environment._pending.append((request, future))
        self.environment._notify()
        return await future


class _TimedPolicy(Policy):
    """An opponent with its own per-move limit (the caller's seat has none: the server's idle
    timeout covers it). A timeout is a PolicyFailure, so the game's invalid-move rule applies."""

    def __init__(self, inner: Policy, timeout: float | None) -> None:
        self.inner, self.timeout = inner, timeout
        self.name, self.spec, self.provider = inner.name, inner.spec, inner.provider

    async def act(self, request: MoveRequest) -> PolicyReply:
        try:
            return await asyncio.wait_for(self.inner.act(request), self.timeout)
        except asyncio.TimeoutError:
            raise PolicyFailure(f"timeout after {self.timeout:g}s") from None

    async def close(self) -> None:
        await self.inner.close()


def episode_key(game_id: str, seed: int, seat: int, num_players: int, options: dict[str, Any], opponents: Sequence[str]) -> str:
    """A stable id for an episode's configuration; used as the match id that seeds scripted policies."""
    blob = json.dumps([game_id, seed, seat, num_players, options, list(opponents)], sort_keys=True, default=str)
    return "env-" + hashlib.sha256(blob.encode()).hexdigest()[:20]


class SeatEnvironment:
    """An episode of one game seen from one seat. Use `await reset(...)`, then `await step(move)`
    until `view.done`; `close()` releases the opponents. One episode at a time per environment.

        environment = SeatEnvironment(make_game=games.registry.make_game)
        view = await environment.reset("tictactoe", seed=1, seat=1, opponents=["bot"])
    """

    def __init__(
        self,
        *,
        make_game: GameFactory,
        name: str = "client",
        resolve_policy: PolicyResolver = make_policy,
        opponent_timeout: float | None = 60.0,
        max_steps: int = 10_000,
        owns_opponents: bool = True,
    ) -> None:
        self.name = name or "client"
        self.make_game = make_game  # injected: arena (the game API) does not import the games
        self.resolve_policy = resolve_policy
        # False when `resolve_policy` hands out shared policies (a server's pool) that outlive episodes.
        self.owns_opponents = owns_opponents
        self.opponent_timeout = opponent_timeout
        self.max_steps = max_steps
        self.game: Game | None = None
        self.seat = 0
        self.seed = 0
        self.hot_seat = False
        self.opponents: list[str] = []
        self.record: MatchRecord | None = None
        self._policies: list[Policy] = []
        self._task: asyncio.Task[MatchRecord] | None = None
        self._pending: list[tuple[MoveRequest, asyncio.Future[PolicyReply]]] = []
        self._wake: asyncio.Future[None] | None = None  # resolved when a request is parked or the match ends
        self._client_feedback: dict[int, str | None] = {}
        self._view: SeatView | None = None

    # ---- the caller's API ------------------------------------------------------------------------
    async def reset(
        self,
        game: str,
        *,
        seed: int = 0,
        seat: int = 0,
        options: dict[str, Any] | None = None,
        opponents: Sequence[str] | None = None,
        num_players: int | None = None,
    ) -> SeatView:
        """Start a new episode (closing any running one). `opponents` are policy specs for the other
        seats in seat order; none means hot-seat with `num_players` seats (default: the game's minimum)."""
        await self._stop()
        opponents = [str(s) for s in (opponents or [])]
        options = dict(options or {})
        try:
            seed = int(seed)
            seat = int(seat)
        except (TypeError, ValueError):
            raise SeatEnvironmentError("seed and seat must be integers") from None
        if opponents:
            if num_players is not None and num_players != len(opponents) + 1:
                raise SeatEnvironmentError(f"{len(opponents)} opponent(s) make {len(opponents) + 1} players, not {num_players}")
            num_players = len(opponents) + 1
        try:
            game_obj = self.make_game(game, num_players=num_players, **options)
        except Exception as exc:  # unknown id, wrong player count, bad options, unavailable game
            raise SeatEnvironmentError(str(exc) if str(exc).startswith(("unknown game", game)) else f"{game}: {exc}") from None
        n = game_obj.num_players
        if not 0 <= seat < n:
            raise SeatEnvironmentError(f"seat {seat} does not exist in a {n}-player {game_obj.id} (seats 0..{n - 1})")
        opponent_policies: list[Policy] = []
        try:
            for spec in opponents:
                policy = self.resolve_policy(spec)
                # Scripted policies answer at once (and a timeout could not interrupt them anyway).
                opponent_policies.append(policy if policy.provider == "scripted" else _TimedPolicy(policy, self.opponent_timeout))
        except Exception as exc:
            for p in opponent_policies if self.owns_opponents else ():
                await p.close()
            raise SeatEnvironmentError(f"opponent {spec!r}: {exc}") from None
        client = _ClientSeat(self, self.name)
        if opponents:
            policies: list[Policy] = list(opponent_policies)
            policies.insert(seat, client)
        else:
            policies = [client] * n
        self.game, self.seat, self.seed = game_obj, seat, seed
        self.hot_seat, self.opponents = not opponents, opponents
        self._policies = opponent_policies
        self._client_feedback = {}
        self.record = None
        match_id = episode_key(game_obj.id, seed, seat, n, options, opponents)
        self._task = asyncio.create_task(
            play_match(game_obj, policies, seed, max_steps=self.max_steps, match_id=match_id, on_turn=self._on_turn)
        )
        self._task.add_done_callback(lambda _task: self._notify())
        view = await self._next_view()
        view.rules = game_obj.rules
        return view

    async def step(self, move: str, *, raw: str | None = None, rejection: str | None = None, parse: str = "") -> SeatView:
        """Play the caller's move for the player named in the last view. A caller that parses a
        model's reply passes the reply as written (`raw`, what the record keeps), how the move was
        found (`parse`), and, when its parser found no move in the asked-for format, the feedback
        (`rejection`): the game then counts an invalid attempt, exactly as in a league."""
        if self._task is None:
            raise SeatEnvironmentError("no episode: call reset first")
        if not self._pending:
            raise SeatEnvironmentError("the episode is over; call reset to start another")
        request, future = self._pending.pop(0)
        text = str(move)[:MAX_REPLY_CHARS]
        written = text if raw is None else str(raw)[:MAX_REPLY_CHARS]
        future.set_result(PolicyReply(action=text, raw=written, rejection=rejection, meta={"parse": parse} if parse else {}))
        return await self._next_view()

    def view(self) -> SeatView | None:
        """The last view returned, without waiting."""
        return self._view

    def state(self) -> dict[str, Any]:
        """The episode's JSON state. The game's own state holds every seat's secrets, so it is
        included only where the caller may see everything: hot-seat, or once the episode is done."""
        if self.game is None:
            return {"episode": None}
        done = self._view is not None and self._view.done
        state: dict[str, Any] = {
            "game_id": self.game.id,
            "seed": self.seed,
            "seat": self.seat,
            "num_players": self.game.num_players,
            "opponents": list(self.opponents),
            "hot_seat": self.hot_seat,
            "turn": self._view.turn if self._view else 0,
            "done": done,
            "to_act": [] if done else self.game.to_act(),
        }
        if self.hot_seat or done:
            state["game_state"] = self.game.get_state()
        return state

    async def close(self) -> None:
        await self._stop()

    # ---- internals -------------------------------------------------------------------------------
    def _on_turn(self, game: Game, turn: TurnRecord) -> None:
        if self.hot_seat or turn.player == self.seat:
            self._client_feedback[turn.player] = None if turn.valid else (turn.feedback or turn.error or "invalid move")

    def _notify(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def _next_view(self) -> SeatView:
        """Wait until a caller's seat is asked to move, or the match is over."""
        assert self._task is not None and self.game is not None
        while not self._pending and not self._task.done():
            # One bare future per wait, not a task: this is the hot path of every step.
            self._wake = asyncio.get_running_loop().create_future()
            await self._wake
        if self._pending:
            request = self._pending[0][0]
            obs = request.observation
            feedback = self._client_feedback.get(obs.player) if request.attempt else None
            self._view = SeatView(
                game_id=self.game.id, seat=self.seat, player=obs.player, role=obs.role, text=obs.text,
                legal_moves=obs.legal_moves, feedback=feedback or obs.feedback, turn=obs.turn,
                attempt=request.attempt, done=False, reward=None, hot_seat=self.hot_seat,
            )
            return self._view
        exc = self._task.exception()
        if exc is not None:
            raise SeatEnvironmentError(f"{self.game.id}: the match failed: {type(exc).__name__}: {exc}") from exc
        record = self.record = self._task.result()
        outcome = record.outcome
        final = self.game.observe(self.seat)
        self._view = SeatView(
            game_id=self.game.id, seat=self.seat, player=None, role=final.role, text=final.text,
            legal_moves=None, feedback=self._client_feedback.get(self.seat), turn=final.turn, attempt=0,
            done=True, reward=float(outcome["scores"][self.seat]) if outcome else 0.0, outcome=outcome,
            status=record.status, hot_seat=self.hot_seat,
        )
        await self._close_policies()
        return self._view

    async def _stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass  # a cancelled episode has no result to keep
        self._task = None
        self._pending = []
        self.game, self._view = None, None
        await self._close_policies()

    async def _close_policies(self) -> None:
        policies, self._policies = self._policies, []
        if not self.owns_opponents:
            return
        for p in policies:
            try:
                await p.close()
            except Exception:
                pass  # closing is best effort; the episode is already decided


class SyncSeatEnvironment:
    """`SeatEnvironment` for synchronous callers (gym-style wrappers): each call runs on a private
    event loop. Do not use from inside a running event loop; use `SeatEnvironment` there."""

    def __init__(self, **kwargs: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self.environment = self._loop.run_until_complete(self._make(kwargs))

    @staticmethod
    async def _make(kwargs: dict[str, Any]) -> SeatEnvironment:
        return SeatEnvironment(**kwargs)  # built on the loop so its asyncio objects belong to it

    def reset(self, game: str, **kwargs: Any) -> SeatView:
        return self._loop.run_until_complete(self.environment.reset(game, **kwargs))

    def step(self, move: str, **reply: Any) -> SeatView:
        return self._loop.run_until_complete(self.environment.step(move, **reply))

    def state(self) -> dict[str, Any]:
        return self.environment.state()

    @property
    def record(self) -> MatchRecord | None:
        return self.environment.record

    def close(self) -> None:
        if not self._loop.is_closed():
            self._loop.run_until_complete(self.environment.close())
            self._loop.close()
