"""One seat of a match, stepped one move at a time by an outside caller.

Environment servers (OpenEnv, GEM, verifiers, the browser play page) need a game as
`reset() -> observation`, `step(move) -> observation`: one seat is the caller's, the other seats
are played in-process by policy specs until it is the caller's turn again. With no opponents the
caller plays every seat (hot-seat) and each view says whose turn it is.

This is not a second match driver: `SeatEnvironment` runs `arena.match.play_match` as a background
task and plays the caller's seats through a `Policy` whose `act` waits for the caller's next move.
Retries after invalid moves, forfeits, eliminations and simultaneous rounds are therefore exactly
the league's, and the finished `MatchRecord` is the same record a league stores.

Game code runs off the caller's event loop: by default each episode's match (the game's
constructor, `play_match`, scripted opponents, every game call) runs on a daemon thread with its own
event loop, and each game call has a deadline (`game_call_timeout`, arena.game_guard): a game that
loops forever ends its episode with one error while the caller's server and its other sessions go
on. Opponents that are not scripted (LLM engines, HTTP clients bound to the caller's loop) still
answer on the caller's loop. Every view is capped in size (`max_view_bytes`).

Episodes are reproducible: the match id (which seeds `bot` and `random`) is derived from the game,
seed, seat, options and opponent specs, so the same reset gives the same episode.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import threading
import weakref
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from arena.game import Game
from arena.game_guard import DEFAULT_GAME_CALL_TIMEOUT, WATCHDOG, GameOverrun, GuardedGame, guarded_call
from arena.match import MAX_REPLY_CHARS, MatchRecord, TurnRecord, play_match
from arena.policy import MoveRequest, Policy, PolicyFailure, PolicyReply, make_policy
from arena.redaction import redact

PolicyResolver = Callable[[str], Policy]
GameFactory = Callable[..., Game]  # (game_id, num_players=None, **options) -> Game, e.g. games.registry.make_game
CLIENT_SPEC = "client"  # the spec recorded for seats the caller plays
DEFAULT_MAX_VIEW_BYTES = 512 * 1024  # the largest shipped views are a few KB; TextArena's under 64 KB


class SeatEnvironmentError(Exception):
    """The caller did something the environment cannot do (bad game, seat, spec; move after the end).
    Its text goes to clients (serve-env, GEM, verifiers, the play page) and may quote a spec or a
    provider's error, so it is redacted here, once, whoever raises it."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class EpisodeEnded(SeatEnvironmentError):
    """The episode was ended by a limit (a game call past its deadline, a view over its cap)."""


def view_bytes(view: "SeatView") -> int:
    """The size of what a view hands a client: its texts and legal moves, UTF-8."""
    size = len(view.text.encode()) + len(view.rules.encode()) + len((view.feedback or "").encode())
    return size + sum(len(m.encode()) + 4 for m in view.legal_moves or ())


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

    def __init__(self, episode: "_Episode", name: str) -> None:
        self.episode = episode
        self.name = name
        self.spec = CLIENT_SPEC

    async def act(self, request: MoveRequest) -> PolicyReply:
        future: asyncio.Future[PolicyReply] = asyncio.get_running_loop().create_future()
        self.episode.pending.append((request, future))
        self.episode.notify()
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


class _OnCallerLoop(Policy):
    """An opponent whose `act` runs on the caller's event loop (its HTTP client or engine belongs
    there), asked from the episode's thread."""

    def __init__(self, inner: Policy, loop: asyncio.AbstractEventLoop) -> None:
        self.inner, self.loop = inner, loop
        self.name, self.spec, self.provider = inner.name, inner.spec, inner.provider

    async def act(self, request: MoveRequest) -> PolicyReply:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.inner.act(request), self.loop))


def episode_key(game_id: str, seed: int, seat: int, num_players: int, options: dict[str, Any], opponents: Sequence[str]) -> str:
    """A stable id for an episode's configuration; used as the match id that seeds scripted policies."""
    blob = json.dumps([game_id, seed, seat, num_players, options, list(opponents)], sort_keys=True, default=str)
    return "env-" + hashlib.sha256(blob.encode()).hexdigest()[:20]


class _Episode:
    """One running match and the caller's parked requests. Lives on the loop that runs the game
    (the episode thread's, or the caller's own when games are not isolated)."""

    def __init__(self, game: Game, seat: int, hot_seat: bool, max_view_bytes: int | None) -> None:
        self.game, self.seat, self.hot_seat, self.max_view_bytes = game, seat, hot_seat, max_view_bytes
        self.pending: list[tuple[MoveRequest, asyncio.Future[PolicyReply]]] = []
        self.task: asyncio.Task[MatchRecord] | None = None
        self.record: MatchRecord | None = None
        self.view: SeatView | None = None
        self._wake: asyncio.Future[None] | None = None  # resolved when a request is parked or the match ends
        self._client_feedback: dict[int, str | None] = {}

    async def start(self, policies: list[Policy], seed: int, max_steps: int, match_id: str) -> SeatView:
        self.task = asyncio.create_task(
            play_match(self.game, policies, seed, max_steps=max_steps, match_id=match_id, on_turn=self._on_turn)
        )
        self.task.add_done_callback(lambda _task: self.notify())
        return await self.next_view(rules=self.game.rules)

    async def step(self, reply: PolicyReply) -> SeatView:
        if not self.pending:
            raise SeatEnvironmentError("the episode is over; call reset to start another")
        _request, future = self.pending.pop(0)
        future.set_result(reply)
        return await self.next_view()

    def state(self) -> dict[str, Any]:
        done = self.view is not None and self.view.done
        state: dict[str, Any] = {"done": done, "to_act": [] if done else self.game.to_act()}
        if self.hot_seat or done:
            state["game_state"] = self.game.get_state()
        return state

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            try:
                await self.task
            except (asyncio.CancelledError, Exception):
                pass  # a cancelled episode has no result to keep
        self.pending = []

    def notify(self) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    def _on_turn(self, game: Game, turn: TurnRecord) -> None:
        if self.hot_seat or turn.player == self.seat:
            self._client_feedback[turn.player] = None if turn.valid else (turn.feedback or turn.error or "invalid move")

    async def next_view(self, rules: str = "") -> SeatView:
        """Wait until a caller's seat is asked to move, or the match is over."""
        assert self.task is not None
        while not self.pending and not self.task.done():
            # One bare future per wait, not a task: this is the hot path of every step.
            self._wake = asyncio.get_running_loop().create_future()
            await self._wake
        game = self.game
        if self.pending:
            request = self.pending[0][0]
            obs = request.observation
            feedback = self._client_feedback.get(obs.player) if request.attempt else None
            view = SeatView(
                game_id=game.id, seat=self.seat, player=obs.player, role=obs.role, text=obs.text,
                legal_moves=obs.legal_moves, feedback=feedback or obs.feedback, turn=obs.turn,
                attempt=request.attempt, done=False, reward=None, hot_seat=self.hot_seat, rules=rules,
            )
        else:
            exc = self.task.exception()
            if isinstance(exc, GameOverrun):
                raise exc  # the watchdog tells the caller, with the call and its deadline
            if exc is not None:
                raise SeatEnvironmentError(f"{game.id}: the match failed: {type(exc).__name__}: {exc}") from exc
            record = self.record = self.task.result()
            outcome = record.outcome
            final = game.observe(self.seat)
            view = SeatView(
                game_id=game.id, seat=self.seat, player=None, role=final.role, text=final.text,
                legal_moves=None, feedback=self._client_feedback.get(self.seat), turn=final.turn, attempt=0,
                done=True, reward=float(outcome["scores"][self.seat]) if outcome else 0.0, outcome=outcome,
                status=record.status, hot_seat=self.hot_seat, rules=rules,
            )
        if self.max_view_bytes is not None and (size := view_bytes(view)) > self.max_view_bytes:
            raise EpisodeEnded(f"{game.id}: a view of {size} bytes is over max_view_bytes={self.max_view_bytes}: episode ended")
        self.view = view
        return view


class _EpisodeThread:
    """A daemon thread running an event loop of its own, where one episode's game code runs. The
    caller hands it coroutines (`submit`) and awaits their answers on its own loop."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._answer: concurrent.futures.Future[Any] | None = None
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)  # daemon: the process can always exit
        self.thread.start()
        self.ident: int = self.thread.ident  # type: ignore[assignment]

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        except GameOverrun:
            pass  # delivered outside the game call it was meant for: the episode has already failed
        finally:
            self.loop.close()

    def submit(self, coroutine: Any) -> "asyncio.Future[Any]":
        """Run `coroutine` on the episode's loop; the answer as a future of the caller's loop."""
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._answer = answer

        async def run() -> None:
            try:
                result = await coroutine
            except GameOverrun:
                return  # `fail` settles the answer with the watchdog's message
            except BaseException as exc:
                _settle(answer, exc=exc)
            else:
                _settle(answer, result)

        try:
            self.loop.call_soon_threadsafe(self.loop.create_task, run())
        except RuntimeError:  # the loop is closed: a game overrun ended it
            coroutine.close()
            raise SeatEnvironmentError("the episode's thread has ended") from None
        return asyncio.wrap_future(answer)

    def call(self, function: Callable[[], Any], timeout: float) -> Any:
        """Run a plain function on the episode's loop and wait for it (a caller without a loop: `state`)."""
        answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._answer = answer

        def run() -> None:
            try:
                _settle(answer, function())
            except GameOverrun:
                pass
            except BaseException as exc:
                _settle(answer, exc=exc)

        try:
            self.loop.call_soon_threadsafe(run)
        except RuntimeError:
            raise SeatEnvironmentError("the episode's thread has ended") from None
        try:
            return answer.result(timeout)
        except concurrent.futures.TimeoutError:
            raise SeatEnvironmentError(f"the episode did not answer within {timeout:g}s") from None

    def fail(self, exc: BaseException) -> None:
        """Settle the caller's outstanding wait with `exc` (called from the watchdog's thread)."""
        if self._answer is not None:
            _settle(self._answer, exc=exc)

    def stop(self) -> None:
        if not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self.loop.stop)
            except RuntimeError:
                pass  # closed in between


def _let_go(thread: _EpisodeThread) -> None:
    WATCHDOG.unwatch(thread.ident)
    thread.stop()


def _settle(future: concurrent.futures.Future[Any], result: Any = None, exc: BaseException | None = None) -> None:
    try:
        if exc is not None:
            future.set_exception(exc)
        else:
            future.set_result(result)
    except concurrent.futures.InvalidStateError:
        pass  # settled first by the other side (the watchdog, or the episode)


class SeatEnvironment:
    """An episode of one game seen from one seat. Use `await reset(...)`, then `await step(move)`
    until `view.done`; `close()` releases the opponents. One episode at a time per environment.

        environment = SeatEnvironment(make_game=games.registry.make_game)
        view = await environment.reset("tictactoe", seed=1, seat=1, opponents=["bot"])

    `isolate_games=False` runs the game on the caller's loop, unguarded (trusted, in-process callers).
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
        game_call_timeout: float = DEFAULT_GAME_CALL_TIMEOUT,
        max_view_bytes: int | None = DEFAULT_MAX_VIEW_BYTES,
        isolate_games: bool = True,
    ) -> None:
        self.name = name or "client"
        self.make_game = make_game  # injected: arena (the game API) does not import the games
        self.resolve_policy = resolve_policy
        # False when `resolve_policy` hands out shared policies (a server's pool) that outlive episodes.
        self.owns_opponents = owns_opponents
        self.opponent_timeout = opponent_timeout
        self.max_steps = max_steps
        self.game_call_timeout = game_call_timeout
        self.max_view_bytes = max_view_bytes
        self.isolate_games = isolate_games
        self.game: Game | None = None
        self.rules = ""
        self.seat = 0
        self.seed = 0
        self.hot_seat = False
        self.opponents: list[str] = []
        self._policies: list[Policy] = []
        self._episode: _Episode | None = None
        self._thread: _EpisodeThread | None = None
        self._ended: str | None = None  # why a limit ended the episode
        self._label = ""  # the game id asked for, named in overrun errors

    @property
    def record(self) -> MatchRecord | None:
        return self._episode.record if self._episode is not None else None

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
        await self._stop(keep_thread=True)  # one thread serves every episode until close or an overrun
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
        self._label = game
        if self.isolate_games and self._thread is None:
            self._thread = thread = _EpisodeThread(f"episode-{self.name[:40]}")
            WATCHDOG.watch(thread.ident, self.game_call_timeout, self._overrun_handler(thread))
            weakref.finalize(self, _let_go, thread)  # a caller that never closes must not keep the thread
        try:
            return await self._start(game, seed, seat, options, opponents, num_players)
        except EpisodeEnded as exc:
            await self._end(str(exc))
            raise
        except BaseException:
            await self._stop()
            raise

    async def _start(self, game: str, seed: int, seat: int, options: dict[str, Any], opponents: list[str], num_players: int | None) -> SeatView:
        game_obj = await self._on_episode(self._make_game(game, num_players, options))
        n = game_obj.num_players
        if not 0 <= seat < n:
            raise SeatEnvironmentError(f"seat {seat} does not exist in a {n}-player {game_obj.id} (seats 0..{n - 1})")
        loop = asyncio.get_running_loop()
        opponent_policies: list[Policy] = []
        playing: list[Policy] = []
        try:
            for spec in opponents:
                policy = self.resolve_policy(spec)
                opponent_policies.append(policy)
                # Scripted policies answer at once, calling back into the game: they play on the
                # episode's thread (and a timeout could not interrupt them anyway).
                if policy.provider == "scripted":
                    playing.append(policy)
                else:
                    timed = _TimedPolicy(policy, self.opponent_timeout)
                    playing.append(_OnCallerLoop(timed, loop) if self.isolate_games else timed)
        except Exception as exc:
            for p in opponent_policies if self.owns_opponents else ():
                await p.close()
            raise SeatEnvironmentError(f"opponent {spec!r}: {exc}") from None
        episode = _Episode(game_obj, seat, not opponents, self.max_view_bytes)
        client = _ClientSeat(episode, self.name)
        if opponents:
            policies: list[Policy] = list(playing)
            policies.insert(seat, client)
        else:
            policies = [client] * n
        self.game, self.seat, self.seed = game_obj, seat, seed
        self.hot_seat, self.opponents = not opponents, opponents
        self._policies = opponent_policies
        self._episode = episode
        match_id = episode_key(game_obj.id, seed, seat, n, options, opponents)
        view = await self._on_episode(episode.start(policies, seed, self.max_steps, match_id))
        self.rules = view.rules
        return await self._after(view)

    async def _make_game(self, game: str, num_players: int | None, options: dict[str, Any]) -> Game:
        try:
            if self._thread is None:
                return self.make_game(game, num_players=num_players, **options)
            made = guarded_call(self._thread.ident, "constructor", self.make_game, game, num_players=num_players, **options)
            return GuardedGame(made, self._thread.ident)  # type: ignore[return-value]
        except Exception as exc:  # unknown id, wrong player count, bad options, unavailable game
            raise SeatEnvironmentError(str(exc) if str(exc).startswith(("unknown game", game)) else f"{game}: {exc}") from None

    async def step(self, move: str, *, raw: str | None = None, rejection: str | None = None, parse: str = "") -> SeatView:
        """Play the caller's move for the player named in the last view. A caller that parses a
        model's reply passes the reply as written (`raw`, what the record keeps), how the move was
        found (`parse`), and, when its parser found no move in the asked-for format, the feedback
        (`rejection`): the game then counts an invalid attempt, exactly as in a league."""
        if self._ended is not None:
            raise SeatEnvironmentError(f"{self._ended}; call reset to start another")
        if self._episode is None:
            raise SeatEnvironmentError("no episode: call reset first")
        text = str(move)[:MAX_REPLY_CHARS]
        written = text if raw is None else str(raw)[:MAX_REPLY_CHARS]
        reply = PolicyReply(action=text, raw=written, rejection=rejection, meta={"parse": parse} if parse else {})
        try:
            view = await self._on_episode(self._episode.step(reply))
        except EpisodeEnded as exc:
            await self._end(str(exc))
            raise
        return await self._after(view)

    def view(self) -> SeatView | None:
        """The last view returned, without waiting."""
        return self._episode.view if self._episode is not None and self._ended is None else None

    def state(self) -> dict[str, Any]:
        """The episode's JSON state. The game's own state holds every seat's secrets, so it is
        included only where the caller may see everything: hot-seat, or once the episode is done."""
        if self.game is None or self._episode is None:
            return {"episode": None}
        view = self._episode.view
        episode_state = (self._episode.state() if self._thread is None
                         else self._thread.call(self._episode.state, self.game_call_timeout + 1.0))
        return {
            "game_id": self.game.id,
            "seed": self.seed,
            "seat": self.seat,
            "num_players": self.game.num_players,
            "opponents": list(self.opponents),
            "hot_seat": self.hot_seat,
            "turn": view.turn if view else 0,
            **episode_state,
        }

    async def close(self) -> None:
        await self._stop()

    # ---- internals -------------------------------------------------------------------------------
    async def _on_episode(self, coroutine: Any) -> Any:
        """Await `coroutine` where the game runs: the episode's thread, or here when not isolated."""
        if self._thread is None:
            return await coroutine
        return await self._thread.submit(coroutine)

    async def _after(self, view: SeatView) -> SeatView:
        if view.done:
            await self._close_policies()
        return view

    def _overrun_handler(self, thread: _EpisodeThread) -> Callable[[str], None]:
        me = weakref.ref(self)  # the watchdog must not keep an unclosed environment alive

        def on_overrun(message: str) -> None:  # on the watchdog's thread
            environment = me()
            thread.fail(EpisodeEnded(f"{environment._label if environment else 'game'}: {message}: episode ended"))
        return on_overrun

    async def _end(self, why: str) -> None:
        """A limit ended the episode: let its thread go (or leave it behind, counted, if stuck in C)."""
        thread = self._thread
        await self._stop()
        self._ended = why
        if thread is not None:
            await asyncio.to_thread(thread.thread.join, 1.0)
            if thread.thread.is_alive():
                WATCHDOG.abandoned += 1

    async def _stop(self, keep_thread: bool = False) -> None:
        episode, thread = self._episode, self._thread
        # After an overrun the thread may still be unwinding (or stuck in C): never reused.
        keep_thread = keep_thread and self._ended is None and thread is not None and thread.thread.is_alive()
        self._episode, self._ended = None, None
        if not keep_thread:
            self._thread = None
        self.game, self.rules = None, ""
        if episode is not None:
            try:
                if thread is None:
                    await episode.stop()
                elif thread.thread.is_alive():
                    await asyncio.wait_for(thread.submit(episode.stop()), self.game_call_timeout + 1.0)
            except (asyncio.TimeoutError, Exception):
                pass  # a stuck or failed episode is let go below
        if thread is not None and not keep_thread:
            WATCHDOG.unwatch(thread.ident)
            thread.stop()
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
