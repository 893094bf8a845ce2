"""The game API: what every game (native or adapted) offers the match driver.

A game is a deterministic state machine for 1..N players, seeded at reset. The driver loop is:

    game.reset(seed)
    while not game.is_over():
        for player in game.to_act():          # one player, or all of them for simultaneous moves
            obs = game.observe(player)        # private text view + legal moves where enumerable
            result = game.step(player, text)  # validates; invalid -> feedback, retry, then the rule
    game.outcome()                            # scores and ranks per player

`Game` is the protocol the driver relies on. `NativeGame` implements the bookkeeping shared by our
own games (invalid-move allowance, forfeit/elimination, serialisable state, seeded chance), so a
native game only writes its rules: `_legal_moves`, `_check`, `_apply`, `_render`, `_result`.
"""

from __future__ import annotations

import enum
import random
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from arena.game_options import OptionSchema
from arena.rules_text import normalise_rules


class InvalidMoveRule(str, enum.Enum):
    """What happens once a player has used up its retry allowance on one turn."""

    FORFEIT = "forfeit"  # the offender loses (2 players) / ranks last and the game ends
    ELIMINATE = "eliminate"  # the offender is out; the others play on (N players)
    RANDOM_MOVE = "random_move"  # a uniformly random legal move is played for them


@dataclass
class Observation:
    """What one player sees when it is asked to move."""

    player: int
    text: str  # self-contained, readable by an LLM; never shows another player's secrets
    legal_moves: list[str] | None = None  # None when moves are free text (e.g. negotiation)
    turn: int = 0  # number of accepted moves so far in the game
    role: str = ""  # e.g. "X", "Player 1 (small blind)"
    feedback: str | None = None  # why the previous attempt was rejected, if it was

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class StepResult:
    valid: bool
    feedback: str = ""  # why a move was rejected, or what the accepted move did
    penalty: str | None = None  # the rule applied when the allowance ran out ("forfeit", ...)
    move: str | None = None  # the move as the game understood it (normalised), when valid


@dataclass
class Outcome:
    """Final result. Ranks start at 1 (best); tied players share a rank."""

    scores: list[float]
    ranks: list[int]
    reason: str = ""

    @property
    def winners(self) -> list[int]:
        return [p for p, r in enumerate(self.ranks) if r == 1]

    @property
    def is_draw(self) -> bool:
        return len(self.ranks) > 1 and len(set(self.ranks)) == 1

    def to_dict(self) -> dict[str, Any]:
        return {"scores": list(self.scores), "ranks": list(self.ranks), "reason": self.reason}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Outcome":
        return cls(scores=list(d["scores"]), ranks=list(d["ranks"]), reason=d.get("reason", ""))


def ranks_from_scores(scores: list[float]) -> list[int]:
    """Competition ranking ("1224"): higher score is better, ties share the better rank."""
    return [1 + sum(1 for other in scores if other > s) for s in scores]


def player_count_text(min_players: int, max_players: int) -> str:
    """How many players a game takes, as users read it: "2" or "2-6"."""
    return str(min_players) if min_players == max_players else f"{min_players}-{max_players}"


@dataclass(frozen=True)
class GameInfo:
    """What the registry and `arena games` show about a game."""

    id: str
    name: str
    min_players: int
    max_players: int
    source: str = "native"
    simultaneous: bool = False
    available: bool = True
    reason: str = ""  # why it is unavailable, one line


class GameError(Exception):
    """Misuse of a game (wrong player, game over, bad options): a bug in the caller, not a bad move."""


class UnknownGameError(GameError):
    """A game id that names no game; the message lists the closest valid ids. Declared here, beside
    GameError, so the registry and the TextArena adapter both raise it without importing each other."""


class Game(ABC):
    """The protocol the match driver relies on. See the module docstring for the loop."""

    id: ClassVar[str] = ""
    name: ClassVar[str] = ""
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    simultaneous: ClassVar[bool] = False
    source: ClassVar[str] = "native"

    num_players: int

    @property
    def rules(self) -> str:
        """The rules in plain words, for a player (human or LLM) who has never seen the game:
        the class docstring, normalised once here (dedented, wrapped lines joined)."""
        return normalise_rules(type(self).__doc__ or self.name)

    @abstractmethod
    def reset(self, seed: int) -> None: ...

    @abstractmethod
    def to_act(self) -> list[int]:
        """Players who must move now: one, or several for a simultaneous-move round."""

    @abstractmethod
    def observe(self, player: int) -> Observation: ...

    @abstractmethod
    def legal_moves(self, player: int) -> list[str] | None:
        """The player's legal moves now, or None where moves are free text. Cheap: no rendering."""

    @abstractmethod
    def step(self, player: int, action: str) -> StepResult: ...

    @abstractmethod
    def fail(self, player: int, reason: str) -> StepResult:
        """The player could not produce a move at all (timeout, provider outage): the allowance
        is treated as used up and the game's invalid-move rule applies at once."""

    @abstractmethod
    def reject(self, player: int, reason: str) -> StepResult:
        """The player answered, but not in the asked-for format (no move to hand over): one
        invalid attempt with `reason` as feedback, like a rejected move."""

    @abstractmethod
    def is_over(self) -> bool: ...

    @abstractmethod
    def outcome(self) -> Outcome: ...

    @abstractmethod
    def get_state(self) -> dict[str, Any]:
        """JSON-serialisable state; `set_state(get_state())` resumes the game exactly."""

    @abstractmethod
    def set_state(self, state: dict[str, Any]) -> None: ...

    def role(self, player: int) -> str:
        return f"Player {player}"

    def secrets(self, player: int) -> list[str]:
        """Phrases of `player`'s private information as its own view shows them (e.g. "Your card: K").
        The conformance suite checks each appears in that player's view and in no one else's."""
        return []

    def random_move(self, player: int, rng: random.Random) -> str:
        """A uniformly random legal move. Free-text games override this with a random valid text."""
        legal = self.legal_moves(player)
        if not legal:
            raise GameError(f"{self.id} has free-text moves and no random_move")
        return rng.choice(legal)

    def bot_move(self, player: int, rng: random.Random) -> str:
        """The scripted baseline's move, using only what `player` may know. Default: random."""
        return self.random_move(player, rng)

    def check_move(self, player: int, action: str) -> str | None:
        """Why `action` would be refused now, without playing it; None when it would be accepted.
        Harnesses that let a model rethink before its answer reaches the game ask this
        (arena.llm.samplers). Default: a listed legal move is accepted (case and spacing aside);
        games that accept other spellings say so by overriding it (NativeGame asks its own check)."""
        legal = self.legal_moves(player)
        if legal is None:
            return None
        wanted = "".join(action.split()).lower().strip("[]")
        if any("".join(m.split()).lower() == wanted for m in legal):
            return None
        return f"{action.strip()[:40]!r} is not one of the legal moves"

    def move_notation(self, player: int, notation: str) -> list[str] | None:
        """The player's legal moves written in another notation the game also accepts, in the
        order of `legal_moves(player)`; None where the game has no notation by that name. Prompt
        variants list moves in it (arena.llm.prompt_variants); chess offers "san"."""
        return None

    def bot_distribution(self, player: int) -> dict[str, float] | None:
        """The scripted baseline's move probabilities where the game states them (exact
        evaluation needs them); None where the baseline is only known by its draws."""
        return None

    @classmethod
    def info(cls) -> GameInfo:
        return GameInfo(
            id=cls.id,
            name=cls.name,
            min_players=cls.min_players,
            max_players=cls.max_players,
            source=cls.source,
            simultaneous=cls.simultaneous,
        )


class NativeGame(Game):
    """Shared bookkeeping for our own games.

    Subclasses keep their state in the attributes named by `STATE_FIELDS`, using only JSON types
    (int, float, str, bool, None, lists, dicts with str keys), so state round-trips for free.
    They implement:
      _setup()                     deal/shuffle with self.rng, set the first player(s)
      _current()                   players to move now (before eliminations are filtered)
      _legal_moves(player)         list[str], or None for free-text moves
      _check(player, action)       -> (normalised move, None) or (None, "why it is invalid")
      _apply(player, move)         change the state; set self.finished / self.final when over
      _render(player)              the player's private text view
      _on_eliminated(player)       optional: tidy up when a player is eliminated (N-player games)
    and declare the options they take in `OPTIONS` (arena.game_options), checked before `__init__`
    keeps them: a game never sees an undeclared option or a value outside its declared range.
    """

    invalid_move_rule: ClassVar[InvalidMoveRule] = InvalidMoveRule.FORFEIT
    OPTIONS: ClassVar[OptionSchema] = OptionSchema()  # the options it takes (arena.game_options); none by default
    retries: ClassVar[int] = 2  # invalid attempts allowed per turn before the rule applies
    STATE_FIELDS: ClassVar[tuple[str, ...]] = ()
    _BASE_FIELDS: ClassVar[tuple[str, ...]] = (
        "seed",
        "move_count",
        "finished",
        "final",
        "eliminated",
        "invalid_counts",
        "last_feedback",
        "log",
    )

    def __init__(self, num_players: int | None = None, **options: Any) -> None:
        n = self.min_players if num_players is None else int(num_players)
        if not self.min_players <= n <= self.max_players:
            raise GameError(
                f"{self.id} takes {player_count_text(self.min_players, self.max_players)} players, not {n}"
            )
        self.num_players = n
        self.options = self.OPTIONS.validate(self.id, options)  # cleaned, defaults filled in
        self.rng = random.Random(0)
        self.seed = 0
        self._clear()

    def _clear(self) -> None:
        self.move_count = 0
        self.finished = False
        self.final: dict[str, Any] | None = None  # {"scores": [...], "ranks": [...], "reason": str}
        self.eliminated: list[int] = []
        self.invalid_counts: list[int] = [0] * self.num_players
        self.last_feedback: list[str | None] = [None] * self.num_players
        self.log: list[str] = []  # public events, newest last; rendered as "recent events"

    # ---- the protocol -------------------------------------------------------------------------
    def reset(self, seed: int) -> None:
        self.seed = int(seed)
        self.rng = random.Random(self.seed)
        self._clear()
        self._setup()

    def to_act(self) -> list[int]:
        if self.finished:
            return []
        if not self.eliminated:  # the common case, and the hot path of every play-out
            return self._current()
        return [p for p in self._current() if p not in self.eliminated]

    def observe(self, player: int) -> Observation:
        self._check_player(player)
        return Observation(
            player=player,
            text=self._render(player),
            legal_moves=None if self.finished else self._legal_moves(player),
            turn=self.move_count,
            role=self.role(player),
            feedback=self.last_feedback[player],
        )

    def legal_moves(self, player: int) -> list[str] | None:
        return None if self.finished else self._legal_moves(player)

    def step(self, player: int, action: str) -> StepResult:
        self._check_player(player, must_act=True)
        move, error = self._check(player, str(action))
        if error is not None:
            return self._reject(player, error)
        self.invalid_counts[player] = 0
        self.last_feedback[player] = None
        self.move_count += 1
        self._apply(player, move)
        return StepResult(valid=True, move=move)

    def check_move(self, player: int, action: str) -> str | None:
        """The game's own check (`_check` changes nothing), with the feedback `step` would give."""
        self._check_player(player, must_act=True)
        _, error = self._check(player, str(action))
        return None if error is None else f"Invalid move: {error}"

    def fail(self, player: int, reason: str) -> StepResult:
        self._check_player(player, must_act=True)
        self.invalid_counts[player] = self.retries
        return self._reject(player, reason)

    def reject(self, player: int, reason: str) -> StepResult:
        self._check_player(player, must_act=True)
        return self._reject(player, reason)

    def is_over(self) -> bool:
        return self.finished

    def outcome(self) -> Outcome:
        if not self.finished or self.final is None:
            raise GameError(f"{self.id}: outcome() called before the game is over")
        return Outcome.from_dict(self.final)

    def get_state(self) -> dict[str, Any]:
        state = {name: _json_copy(getattr(self, name)) for name in self._BASE_FIELDS}
        state.update({name: _json_copy(getattr(self, name)) for name in self.STATE_FIELDS})
        version, internal, gauss = self.rng.getstate()
        state["rng"] = [version, list(internal), gauss]
        state["num_players"] = self.num_players
        state["options"] = _json_copy(self.options)
        return state

    def set_state(self, state: dict[str, Any]) -> None:
        if state.get("num_players") != self.num_players:
            raise GameError(
                f"{self.id}: state is for {state.get('num_players')} players, not {self.num_players}"
            )
        if _json_copy(state.get("options", {})) != _json_copy(self.options):
            raise GameError(f"{self.id}: state was saved with options {state.get('options')}, this game has {self.options}")
        for name in self._BASE_FIELDS + self.STATE_FIELDS:
            setattr(self, name, _json_copy(state[name]))
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))

    # ---- helpers for subclasses ---------------------------------------------------------------
    def finish(self, scores: list[float], reason: str, ranks: list[int] | None = None) -> None:
        """End the game. Ranks default to competition ranking by score."""
        self.finished = True
        self.final = {
            "scores": [float(s) for s in scores],
            "ranks": ranks if ranks is not None else ranks_from_scores(scores),
            "reason": reason,
        }

    def alive(self) -> list[int]:
        return [p for p in range(self.num_players) if p not in self.eliminated]

    def _on_eliminated(self, player: int) -> None:
        """Hook for N-player games; called after `player` was added to `self.eliminated`."""

    def _elimination_scores(self) -> list[float]:
        """Score for a game that ends because one player is left: survivors first, then the
        eliminated in reverse order of elimination (the last one out ranks second)."""
        n = self.num_players
        scores = [0.0] * n
        order = self.alive() + list(reversed(self.eliminated))
        for place, p in enumerate(order):
            scores[p] = float(n - 1 - place)
        return scores

    # ---- internals ----------------------------------------------------------------------------
    def _check_player(self, player: int, must_act: bool = False) -> None:
        if not 0 <= player < self.num_players:
            raise GameError(f"{self.id}: no player {player} in a {self.num_players}-player game")
        if must_act:
            if self.finished:
                raise GameError(f"{self.id}: the game is over")
            if player not in self.to_act():  # to_act() is cheap: no rendering, no copies
                raise GameError(f"{self.id}: it is not player {player}'s turn")

    def _reject(self, player: int, error: str) -> StepResult:
        self.invalid_counts[player] += 1
        if self.invalid_counts[player] <= self.retries:
            left = self.retries - self.invalid_counts[player] + 1
            self.last_feedback[player] = f"Invalid move: {error} ({left} attempt(s) left)"
            return StepResult(valid=False, feedback=self.last_feedback[player])
        self.invalid_counts[player] = 0
        self.last_feedback[player] = None
        penalty = self._apply_invalid_rule(player, error)
        return StepResult(valid=False, feedback=f"Invalid move: {error}", penalty=penalty)

    def _apply_invalid_rule(self, player: int, error: str) -> str:
        rule = self.invalid_move_rule
        if rule is InvalidMoveRule.RANDOM_MOVE:
            legal = self._legal_moves(player)
            if legal:
                move = self.rng.choice(legal)
                self.log.append(f"{self.role(player)} made no valid move; a random move was played")
                self.move_count += 1
                self._apply(player, move)
                return "random_move"
            rule = InvalidMoveRule.FORFEIT
        if rule is InvalidMoveRule.ELIMINATE and len(self.alive()) > 2:
            self.eliminated.append(player)
            self.log.append(f"{self.role(player)} was eliminated after invalid moves ({error})")
            self._on_eliminated(player)
            if not self.finished and len(self.alive()) == 1:
                self.finish(self._elimination_scores(), "last player standing")
            return "eliminate"
        if rule is InvalidMoveRule.ELIMINATE:
            # Two left: the offender is out like any eliminated player, so it still ranks above
            # the players knocked out before it ("the last one out ranks second").
            self.eliminated.append(player)
            self.log.append(f"{self.role(player)} was eliminated after invalid moves ({error})")
            self.finish(self._elimination_scores(), f"{self.role(player)} forfeited: {error}")
            return "forfeit"
        # Forfeit: the offender ranks last and everyone else shares first place.
        scores = [1.0] * self.num_players
        scores[player] = -1.0
        self.finish(scores, f"{self.role(player)} forfeited: {error}")
        return "forfeit"


def _json_copy(value: Any) -> Any:
    """Deep copy restricted to JSON types (tuples become lists), so get/set_state never alias."""
    if isinstance(value, dict):
        return {str(k): _json_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_copy(v) for v in value]
    return value
