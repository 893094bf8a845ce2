"""The match driver: plays one game between N policies and records every turn.

Turn order, retries and the invalid-move rule belong to the game; the driver asks the right
policy, enforces the per-move time limit, and writes a MatchRecord that is JSON all the way down.
A policy that times out or fails (PolicyFailure, or any exception) is recorded with the error, and
`game.fail` applies the game's invalid-move rule, so a match always ends with a result.

The record never holds a secret the process knows (arena.redaction.known_secret_masker): an agent
or provider that echoes its key in a reply, or a game whose feedback quotes that reply, gets it
masked in what is recorded and shown. The game itself is always given the reply as it came.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Awaitable, Callable, Sequence

from arena.game import Game, Outcome, StepResult
from arena.policy import Exchange, MoveRequest, Policy, PolicyFailure, PolicyReply
from arena.redaction import known_secret_masker, redact

MAX_REPLY_CHARS = 8000  # replies are untrusted: cap what we store and show
# TurnRecord.meta["parse"] values that are not clean replies: a legal move found in prose (parser
# fuzzy) or named by a second model (parser extractor:SPEC), not stated as the prompt asked
LENIENT_PARSES = frozenset({"mention", "extracted"})


@dataclass
class TurnRecord:
    index: int  # position in the match's turn list
    player: int
    policy: str  # the policy's display name
    turn: int  # accepted moves before this attempt
    attempt: int  # 0 first try, 1.. retries after invalid moves
    observation: str
    legal_moves: list[str] | None
    raw: str  # what the policy wrote (capped)
    action: str | None  # what was handed to the game
    valid: bool
    feedback: str = ""
    penalty: str | None = None  # the rule applied when the allowance ran out
    error: str | None = None  # "timeout after 30s", "provider failure: ..."
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TurnRecord":
        return cls(**_checked_fields(cls, d, "a turn"))

    @property
    def clean(self) -> bool:
        """A valid move stated as asked. A lenient parse ("mention": a legal move found somewhere
        in prose; "extracted": named by an extractor model) is accepted by the game, but
        leaderboards, exports and rewards count it as invalid."""
        return self.valid and self.meta.get("parse") not in LENIENT_PARSES


@dataclass
class MatchRecord:
    match_id: str
    game_id: str
    num_players: int
    seed: int
    policies: list[str]  # display names, by seat
    specs: list[str]  # policy specs, by seat
    turns: list[TurnRecord] = field(default_factory=list)
    outcome: dict[str, Any] | None = None  # Outcome.to_dict()
    status: str = "running"  # running | finished | aborted
    started_at: str = ""
    finished_at: str = ""
    duration_s: float = 0.0
    final_views: list[str] = field(default_factory=list)  # each player's last observation
    game_options: dict[str, Any] = field(default_factory=dict)

    @property
    def result(self) -> Outcome | None:
        return Outcome.from_dict(self.outcome) if self.outcome else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "MatchRecord":
        d = _checked_fields(cls, d, "top level")
        if not isinstance(d.get("turns", []), list):
            raise RecordFormatError("not a match record: 'turns' is not a list")
        d["turns"] = [TurnRecord.from_dict(t) for t in d.get("turns", [])]
        return cls(**d)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(indent=1), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "MatchRecord":
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


class RecordFormatError(ValueError):
    """JSON that is not a MatchRecord (another file, or a record from a foreign tool)."""


def _checked_fields(cls: type, data: Any, what: str) -> dict[str, Any]:
    """`data` as keyword arguments of the dataclass `cls`, or one line saying what does not fit."""
    if not isinstance(data, dict):
        raise RecordFormatError(f"not a match record ({what}: a JSON object expected, not {type(data).__name__})")
    known = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
    missing, unknown = sorted(required - set(data)), sorted(set(data) - known)
    if missing or unknown:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + ([f"unknown {', '.join(unknown[:5])}"] if unknown else [])
        raise RecordFormatError(f"not a match record ({what}: {'; '.join(parts)})")
    return dict(data)


TurnCallback = Callable[[Game, TurnRecord], Awaitable[None] | None]


async def play_match(
    game: Game,
    policies: Sequence[Policy],
    seed: int,
    *,
    move_timeout: float | None = None,
    max_steps: int = 10_000,
    match_id: str | None = None,
    on_turn: TurnCallback | None = None,
) -> MatchRecord:
    """Reset `game` with `seed` and play it to the end. Seat i is played by `policies[i]`."""
    if len(policies) != game.num_players:
        raise ValueError(f"{game.id} was set up for {game.num_players} players, got {len(policies)} policies")
    record = MatchRecord(
        match_id=match_id or uuid.uuid4().hex,
        game_id=game.id,
        num_players=game.num_players,
        seed=seed,
        policies=[p.name for p in policies],
        specs=[p.spec for p in policies],
        started_at=_now(),
        game_options=dict(getattr(game, "options", {}) or {}),
    )
    histories: list[list[Exchange]] = [[] for _ in policies]
    attempts = [0] * game.num_players
    start = time.perf_counter()
    game.reset(seed)

    async def ask(player: int) -> tuple[int, MoveRequest, PolicyReply | None, str | None, float]:
        obs = game.observe(player)
        request = MoveRequest(
            game_id=game.id,
            game_name=game.name,
            rules=game.rules,
            observation=obs,
            history=histories[player],  # read-only for policies; copying it per move is O(n^2)
            attempt=attempts[player],
            match_id=record.match_id,
            match_seed=seed,
            baseline=lambda rng, p=player: game.bot_move(p, rng),
            random_move=lambda rng, p=player: game.random_move(p, rng),
            baseline_distribution=lambda p=player: game.bot_distribution(p),
            check_move=lambda text, p=player: game.check_move(p, text),
            move_notation=lambda notation, p=player: game.move_notation(p, notation),
            private=tuple(game.secrets(player)),
        )
        t0 = time.perf_counter()
        try:
            reply = await asyncio.wait_for(policies[player].act(request), move_timeout)
            return player, request, reply, None, time.perf_counter() - t0
        except asyncio.TimeoutError:
            return player, request, None, f"timeout after {move_timeout:g}s", time.perf_counter() - t0
        except PolicyFailure as exc:
            return player, request, None, redact(f"policy failure: {exc}")[:500], time.perf_counter() - t0
        except Exception as exc:  # a crashing policy must not take the league down with it
            # A provider's message may echo the request's key or URL: masked before it is kept.
            return player, request, None, redact(f"policy error: {type(exc).__name__}: {exc}")[:500], time.perf_counter() - t0

    steps = 0
    while not game.is_over():
        if steps >= max_steps:
            record.status = "aborted"
            record.outcome = None
            break
        players = game.to_act()
        if not players:  # a game bug: not over, yet nobody may move; never spin forever
            record.status = "aborted"
            break
        # Simultaneous rounds ask everyone at once; moves are only revealed once all have chosen.
        answers = await asyncio.gather(*(ask(p) for p in players))
        for player, request, reply, error, latency in answers:
            if game.is_over() or player not in game.to_act():
                continue
            steps += 1
            if reply is None:
                result = game.fail(player, error or "no move")
                raw, action = "", None
            else:
                raw, action = reply.raw[:MAX_REPLY_CHARS], reply.action[:MAX_REPLY_CHARS]
                result = game.reject(player, reply.rejection) if reply.rejection else game.step(player, action)
            turn = _turn_record(len(record.turns), policies[player], request, reply, raw, action, result, error, latency)
            record.turns.append(turn)
            histories[player].append(
                Exchange(observation=request.observation.text, reply=raw or (action or ""), feedback=None if result.valid else result.feedback)
            )
            attempts[player] = 0 if (result.valid or result.penalty) else attempts[player] + 1
            if on_turn is not None:
                maybe = on_turn(game, turn)
                if asyncio.iscoroutine(maybe):
                    await maybe
    if game.is_over():
        record.status = "finished"
        record.outcome = game.outcome().to_dict()
    mask = known_secret_masker()
    record.outcome = mask(record.outcome)
    record.final_views = [mask(game.observe(p).text) for p in range(game.num_players)]
    record.finished_at = _now()
    record.duration_s = time.perf_counter() - start
    return record


def _turn_record(
    index: int,
    policy: Policy,
    request: MoveRequest,
    reply: PolicyReply | None,
    raw: str,
    action: str | None,
    result: StepResult,
    error: str | None,
    latency: float,
) -> TurnRecord:
    obs = request.observation
    # The game has already stepped on the real action: masking here changes only what is kept.
    mask = known_secret_masker()
    return TurnRecord(
        index=index,
        player=obs.player,
        policy=policy.name,
        turn=obs.turn,
        attempt=request.attempt,
        observation=mask(obs.text),
        legal_moves=mask(obs.legal_moves),
        raw=mask(raw),
        action=mask(action),
        valid=result.valid,
        feedback=mask(result.feedback),
        penalty=result.penalty,
        error=error,
        latency_s=round(latency, 6),
        prompt_tokens=reply.prompt_tokens if reply else None,
        completion_tokens=reply.completion_tokens if reply else None,
        cost_usd=reply.cost_usd if reply else None,
        meta=dict(mask(reply.meta)) if reply else {},
    )


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
