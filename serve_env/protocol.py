"""The messages of `arena serve-env`, shaped as `openenv-core` 0.3.x defines them.

OpenEnv's client sends `{"type": "reset", "data": {...}}`, `{"type": "step", "data": <action>}`,
`{"type": "state"}` and `{"type": "close"}` over WS /ws, and reads back
`{"type": "observation", "data": {"observation": {...}, "reward": r, "done": d}}`,
`{"type": "state", "data": {...}}` or `{"type": "error", "data": {"message": ..., "code": ...}}`.
The models below are also what GET /schema publishes.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arena.match import MAX_REPLY_CHARS
from arena.redaction import redact
from arena.seat_environment import SeatView

MAX_SEED = 2**63 - 1  # the store keeps seeds as signed 64-bit integers (league.db)
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,63}$"


class ErrorCode(str, Enum):
    """OpenEnv's WSErrorCode values (the client prints the code next to the message)."""

    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    SESSION_ERROR = "SESSION_ERROR"


class ResetParams(BaseModel):
    """`reset` data. Unknown fields are refused, so a typo is an error rather than a default."""

    model_config = ConfigDict(extra="forbid")

    game: str | None = Field(default=None, max_length=200, description="Game id, e.g. tictactoe or textarena:TicTacToe-v0 (default: the server's --game)")
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED, description="Seed (0..2**63-1, what the store holds) of the episode; the same seed, seat, options and opponents replay the same episode (default: a random seed, reported back)")
    seat: int = Field(default=0, ge=0, description="The client's seat (0-based)")
    options: dict[str, Any] | None = Field(default=None, description="Game options, as `arena play` takes them")
    opponents: list[str] | None = Field(default=None, max_length=15, description="Policy specs or league policy names for the other seats, in seat order; empty = hot-seat (the client plays every seat)")
    num_players: int | None = Field(default=None, ge=1, le=16, description="Players in a hot-seat episode (default: the game's minimum)")
    name: str | None = Field(default=None, pattern=NAME_PATTERN, description="The client's policy name: the name its stored matches are rated under")
    episode_id: str | None = Field(default=None, max_length=255, description="The client's id for the episode, echoed in state")


class GameAction(BaseModel):
    """One move: the text of a move, as the game's legal moves spell it (a raw model reply works too)."""

    model_config = ConfigDict(extra="forbid")

    move: str = Field(max_length=MAX_REPLY_CHARS, description="The move text")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Ignored; accepted because OpenEnv's Action has it")


class GameObservation(BaseModel):
    """What the client's seat sees (never another seat's secrets)."""

    game_id: str
    seed: int
    seat: int = Field(description="The client's seat")
    player: int | None = Field(description="Whose move the client sends next (differs from seat only in hot-seat); null once done")
    role: str
    text: str = Field(description="That player's private view, as the game renders it")
    legal_moves: list[str] | None = Field(description="Legal moves where the game enumerates them; null for free-text moves or once done")
    feedback: str | None = Field(description="Why the last move was rejected (the game's words), if it was")
    turn: int = Field(description="Accepted moves so far")
    attempt: int = Field(description="0 on a fresh turn, 1.. after rejected moves")
    hot_seat: bool
    status: str = Field(description="running | finished | aborted")
    outcome: dict[str, Any] | None = Field(default=None, description="scores, ranks, reason once done")
    rules: str = Field(default="", description="The game's rules; sent on reset only")
    match_id: str | None = Field(default=None, description="The league match id once a finished episode is stored (--db)")
    done: bool = False
    reward: float | None = Field(default=None, description="0 during the episode; the seat's outcome score at the end")


class GameState(BaseModel):
    """GET /state and the WS `state` message: the episode, and the game's JSON state where the
    client may see all of it (hot-seat, or once done)."""

    model_config = ConfigDict(extra="allow")

    episode_id: str | None = None
    step_count: int = 0


def observation_payload(view: SeatView, seed: int, match_id: str | None = None) -> dict[str, Any]:
    """OpenEnv's serialised observation: reward and done beside the observation, not inside it."""
    reward = view.reward if view.done else 0.0
    observation = {
        "game_id": view.game_id, "seed": seed, "seat": view.seat, "player": view.player, "role": view.role,
        "text": view.text, "legal_moves": view.legal_moves, "feedback": view.feedback, "turn": view.turn,
        "attempt": view.attempt, "hot_seat": view.hot_seat, "status": view.status, "outcome": view.outcome,
        "rules": view.rules, "match_id": match_id,
    }
    return {"observation": observation, "reward": reward, "done": view.done}


def error_payload(message: str, code: ErrorCode, **extra: Any) -> dict[str, Any]:
    # Every error a client reads passes here: an exception's text may quote a spec, a URL or a
    # provider's error, and so a key.
    return {"type": "error", "data": {"message": redact(message), "code": code.value, **extra}}
