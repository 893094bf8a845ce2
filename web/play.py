"""Browser play (`arena web --play`): a visitor's match is one `arena.seat_environment.SeatEnvironment`, the
same single-seat environment `arena serve-env` serves, so moves, retries after invalid moves, forfeits
and the finished `MatchRecord` are the league's own. Finished matches are stored through
`league.outside_play.OutsidePlay` (as serve-env stores its episodes) and rated under the
visitor's name.

What a visitor may ask for is bounded, because the page is open to anyone who can reach it:
- opponents follow the rules every server applies to outsiders (`league.opponent_pool`): `bot`
  and `random`, league policies by name, and specs of the kinds the operator adds with
  `--play-allow` (LLM kinds spend compute; `http` would let a visitor make the server call any
  URL); a league policy is served only if its kind is allowed too;
- a limit on games in play and on games one client (IP address) holds at once
  (server_guards.client_slots), so one visitor cannot take every slot;
- a game closed once its player has done nothing (no start, no move) for the idle limit: looking
  at a game (GET of its view) is not playing it, so a page left open and polling still lets go;
- moves and names capped and checked.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

from arena.game import GameInfo
from arena.policy import Policy, PolicySpec, PolicySpecError
from arena.redaction import redact
from arena.seat_environment import SeatEnvironment, SeatView, SeatEnvironmentError
from games.registry import list_games, make_game
from league.opponent_pool import SCRIPTED_KINDS, OpponentPool, PoolFull, allowed_kinds
from league.outside_play import OutsidePlay
from league.store import Store
from server_guards.client_slots import ClientSlots

log = logging.getLogger(__name__)

NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,39}")
NAME_RULE = "1-40 characters: letters, digits, space, '.', '_', '-', starting with a letter or digit"
# Names that read as policy specs would confuse the board and the stored match.
RESERVED_NAMES = frozenset({"bot", "random", "human", "local", "client"})
MAX_TEXT_CHARS = 20_000  # of a view; TextArena views hold the whole log, so the newest end is kept
ALLOW_HINT = "the operator adds kinds with `arena web --play --play-allow KIND`"


class PlayError(Exception):
    """A visitor's request the page refuses: `status` is the HTTP status, the text says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(redact(message))  # it goes to a page; it may quote what a visitor typed
        self.status = status


@dataclass(frozen=True)
class PlayConfig:
    """What the operator decides (`arena web --play ...`)."""

    allowed_kinds: frozenset[str] = SCRIPTED_KINDS
    league: str = "web-play"  # the league finished matches join
    max_sessions: int = 32
    max_per_client: int = 4  # games one client address holds at once
    idle_timeout_s: float = 600.0  # without a start or a move
    opponent_timeout_s: float = 60.0
    max_move_chars: int = 1000
    max_body_bytes: int = 16 * 1024

    @classmethod
    def build(cls, allow: list[str] | None = None, **kwargs: Any) -> "PlayConfig":
        """The config with `allow` kinds added to bot and random; ValueError names a bad kind."""
        league = kwargs.get("league", cls.league)
        if not league.strip() or len(league) > 100:
            raise ValueError(f"--play-league {league[:100]!r}: a league name is 1-100 characters")
        return cls(allowed_kinds=allowed_kinds(allow or [], "--play-allow"), **kwargs)

    @property
    def typed_specs(self) -> bool:
        """Whether visitors may type a spec (only worth it when kinds beyond bot/random are allowed)."""
        return bool(self.allowed_kinds - SCRIPTED_KINDS)


def check_name(name: str) -> str:
    """The visitor's name, stripped, or PlayError(422) saying what is wrong with it."""
    name = (name or "").strip()
    if not NAME_RE.fullmatch(name):
        raise PlayError(422, f"name {name[:60]!r}: use {NAME_RULE}")
    if name.lower() in RESERVED_NAMES:
        raise PlayError(422, f"name {name!r} is a policy kind; choose another name")
    return name


@dataclass
class BrowserGame:
    """One visitor's game in the browser: its seat environment, who plays it, and what the page last showed."""

    id: str
    name: str
    client: str  # the address whose slot it holds
    opponent: str | None  # None in a one-player game
    environment: SeatEnvironment
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    view: SeatView | None = None
    players: list[str] = field(default_factory=list)
    seed: int = 0
    rules: str = ""
    match_id: int | None = None
    store_error: str | None = None
    closed: bool = False

    def touch(self) -> None:
        """The player did something (started, moved): the idle clock starts again. Reading the
        view does not call this."""
        self.last_used = time.monotonic()


class PlayRoom:
    """Every visitor's game, the opponents they may ask for, and where finished matches go."""

    def __init__(self, config: PlayConfig, store: Store) -> None:
        self.config = config
        self.store = store
        self.outside = OutsidePlay(store, config.league, source="web-play")
        if not store.league_names():
            # A store `arena web --play` has just created: the play league is its only one, so the
            # front page shows that board (and the Play link) rather than "no leagues yet".
            self.outside.open_league()
        self.games_in_play: dict[str, BrowserGame] = {}  # by the id the page holds
        self.slots = ClientSlots(config.max_sessions, config.max_per_client,
                                 total_hint="the operator raises it with `arena web --play-sessions N`",
                                 per_client_hint="finish or close one, or the operator raises `arena web --play-max-per-client N`")
        self.opponents = OpponentPool(config.allowed_kinds, outside=self.outside, allow_hint=ALLOW_HINT)
        self._sweeper: asyncio.Task[None] | None = None
        self._games: list[GameInfo] | None = None

    # ---- what the page offers ----------------------------------------------------------------------
    def games(self) -> list[GameInfo]:
        if self._games is None:
            self._games = [g for g in list_games() if g.available]
        return self._games

    def league_opponents(self) -> list[tuple[str, str]]:
        """(name, kind) of every league policy a visitor may play against (reads the store)."""
        found = []
        for row in self.store.policies():
            if self.opponents.serves_league_policy(row.spec):
                found.append((row.name, PolicySpec.parse(row.spec).kind))
        return sorted(found, key=lambda item: item[0].lower())

    # ---- the visitor's API -------------------------------------------------------------------------
    async def start(self, *, game: str, opponent: str | None, name: str, players: int | None = None,
                    seat: int = 0, seed: int | None = None, client: str = "unknown") -> BrowserGame:
        """A new game for `client` (its address: server_guards.client_slots.client_address)."""
        name = check_name(name)
        if await asyncio.to_thread(self.outside.reserved, name):  # its text names the policy's spec: not for visitors
            raise PlayError(422, f"name {name!r} belongs to a league policy; choose another name")
        info = next((g for g in self.games() if g.id == game), None)
        if players is None:
            players = 2 if info is None or info.min_players <= 2 <= info.max_players else info.min_players
        solo = players == 1
        opponents: list[str] = []
        resolved: dict[str, Policy] = {}
        if not solo:
            opponent = (opponent or "").strip()
            if not opponent:
                raise PlayError(422, "opponent: choose one (bot, random or a league policy)")
            if opponent == name:
                raise PlayError(422, f"opponent {opponent!r} is you: choose another opponent or name")
            resolved[opponent] = await asyncio.to_thread(self._policy, opponent)
            opponents = [opponent] * (players - 1)
        entry = BrowserGame(
            id=secrets.token_urlsafe(18), name=name, client=client, opponent=None if solo else opponent,
            environment=SeatEnvironment(make_game=make_game, name=name, resolve_policy=resolved.__getitem__,
                                opponent_timeout=self.config.opponent_timeout_s, owns_opponents=False),
            seed=random.SystemRandom().randrange(2**31) if seed is None else seed,
        )
        self._take_slot(client)  # nothing between this and the next line can fail: the slot is the game's
        self.games_in_play[entry.id] = entry  # holds its slot while the opponents make their first moves
        try:
            async with entry.lock:
                view = await entry.environment.reset(game, seed=entry.seed, seat=seat, opponents=opponents,
                                                 num_players=players if solo else None)
                await self._advanced(entry, view)
        except SeatEnvironmentError as exc:
            self._drop(entry)
            await entry.environment.close()
            raise PlayError(400, str(exc)) from None
        except BaseException:
            self._drop(entry)
            await entry.environment.close()
            raise
        entry.rules = view.rules
        policy_names = [resolved[o].name for o in opponents]
        entry.players = policy_names[:seat] + [name] + policy_names[seat:]
        return entry

    async def move(self, session_id: str, move: str) -> BrowserGame:
        entry = self.get(session_id)
        if len(move) > self.config.max_move_chars:
            raise PlayError(422, f"move: {len(move)} characters, over the limit of {self.config.max_move_chars}")
        # Shielded: a visitor who leaves mid-move must not leave the game between two views.
        await asyncio.shield(self._step(entry, move))
        return entry

    def get(self, session_id: str) -> BrowserGame:
        """The game, as it is: reading it does not keep it open (only a move does)."""
        entry = self.games_in_play.get(session_id)
        if entry is None or entry.closed:
            raise PlayError(404, "no such game: it ended, was closed after "
                                 f"{self.config.idle_timeout_s:g} s without a move, or the server restarted; start a new game")
        return entry

    async def close(self, session_id: str) -> None:
        entry = self.games_in_play.get(session_id)
        if entry is not None:
            self._drop(entry)
            await self._close(entry)

    # ---- housekeeping ------------------------------------------------------------------------------
    async def startup(self) -> None:
        self._sweeper = asyncio.create_task(self._sweep_forever())

    async def shutdown(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        for entry in list(self.games_in_play.values()):
            self._drop(entry)
            await self._close(entry)
        await self.opponents.close()
        await asyncio.to_thread(self.outside.flush)

    async def sweep(self) -> int:
        """Close games idle longer than the timeout (not those answering a move); returns how many."""
        cutoff = time.monotonic() - self.config.idle_timeout_s
        idle = [e for e in self.games_in_play.values() if e.last_used < cutoff and not e.lock.locked()]
        for entry in idle:
            self._drop(entry)
            await self._close(entry)
        return len(idle)

    async def _sweep_forever(self) -> None:
        every = max(1.0, min(30.0, self.config.idle_timeout_s / 4))
        while True:
            await asyncio.sleep(every)
            try:
                await self.sweep()
            except Exception:  # noqa: BLE001 - the sweeper must outlive one bad game
                log.exception("play: sweeping idle games failed")

    def _take_slot(self, client: str) -> None:
        """Hold a slot for `client`'s new game. A finished game still holds one (its page shows
        the result), so when the client is at its share, its own oldest finished game gives its
        slot up; when the server is full, anyone's. Otherwise refused: 429 for the client's share,
        503 for the server's limit."""
        if self.slots.held_by(client) >= self.slots.per_client:
            self._retire_finished(lambda e: e.client == client)
        if self.slots.in_use >= self.slots.total:
            self._retire_finished(lambda e: True)
        refused = self.slots.take(client)
        if refused is not None:
            raise PlayError(503 if self.slots.in_use >= self.slots.total else 429, f"{refused}; try again in a few minutes")

    def _retire_finished(self, whose: Any) -> None:
        finished = sorted((e for e in self.games_in_play.values()
                           if whose(e) and e.view is not None and e.view.done and not e.lock.locked()), key=lambda e: e.last_used)
        if finished:
            self._drop(finished[0])
            finished[0].closed = True  # its SeatEnvironment holds no task: the match is over

    def _drop(self, entry: BrowserGame) -> None:
        """Take the game out of play and give its client's slot back (once, however it ends)."""
        if self.games_in_play.pop(entry.id, None) is not None:
            self.slots.give_back(entry.client)

    async def _close(self, entry: BrowserGame) -> None:
        entry.closed = True
        try:
            await entry.environment.close()
        except Exception as exc:  # noqa: BLE001 - closing is best effort
            log.warning("play: closing a game failed: %s", exc)

    # ---- internals ---------------------------------------------------------------------------------
    def _policy(self, spec: str) -> Policy:
        """The opponent for `spec`: a league policy by name, else a spec of an allowed kind (runs
        in a worker thread: it reads the store)."""
        if len(spec) > 200:
            raise PlayError(422, "opponent: over 200 characters")
        try:
            return self.opponents.get(spec)
        except PoolFull as exc:
            raise PlayError(503, str(exc)) from None
        except PolicySpecError as exc:
            raise PlayError(400, f"opponent {spec!r}: {exc}") from None

    async def _step(self, entry: BrowserGame, move: str) -> None:
        async with entry.lock:
            if entry.closed:
                raise PlayError(404, "no such game: it was closed; start a new game")
            if entry.view is not None and entry.view.done:
                raise PlayError(409, "this game is over; start a new one")
            try:
                view = await entry.environment.step(move)
            except SeatEnvironmentError as exc:
                raise PlayError(409, str(exc)) from None
            await self._advanced(entry, view)

    async def _advanced(self, entry: BrowserGame, view: SeatView) -> None:
        entry.view = view
        entry.touch()
        if view.done:
            await self._store(entry)

    async def _store(self, entry: BrowserGame) -> None:
        record = entry.environment.record
        # A one-player game (the visitor alone) rates nothing; an aborted match has no outcome.
        if record is None or entry.environment.hot_seat or record.outcome is None:
            return
        try:
            match_id = await asyncio.to_thread(self.outside.record, record)
            entry.match_id = None if match_id is None else int(match_id)
        except Exception as exc:  # noqa: BLE001 - storage trouble must not cost the visitor the result
            log.warning("play: could not store the finished match %s: %s", record.match_id, exc)
            entry.store_error = "the result could not be stored (the server's log says why)"


def view_out(entry: BrowserGame, league: str) -> dict[str, Any]:
    """What the page gets: the seat's view (the game's text, newest end kept), the moves, the
    feedback, and once done the result from the visitor's seat."""
    view = entry.view
    assert view is not None
    text, cut = view.text, 0
    if len(text) > MAX_TEXT_CHARS:
        cut = len(text) - MAX_TEXT_CHARS
        text = text[cut:]
    result, rank = None, None
    if view.done and view.outcome and not entry.environment.hot_seat and view.status == "finished":
        ranks = list(view.outcome.get("ranks") or [])
        if len(ranks) > view.seat:
            rank = int(ranks[view.seat])
            result = "draw" if len(set(ranks)) == 1 else ("win" if rank == 1 else "loss")
    return {
        "id": entry.id, "game_id": view.game_id, "seed": entry.seed, "seat": view.seat, "name": entry.name,
        "opponent": entry.opponent, "players": list(entry.players), "solo": entry.environment.hot_seat,
        "player": view.player, "role": view.role, "text": text, "text_cut": cut, "legal_moves": view.legal_moves,
        "feedback": view.feedback, "turn": view.turn, "attempt": view.attempt, "done": view.done, "status": view.status,
        "outcome": view.outcome, "reward": view.reward, "result": result, "rank": rank, "rules": entry.rules,
        "league": league, "match_id": entry.match_id, "store_error": entry.store_error,
    }
