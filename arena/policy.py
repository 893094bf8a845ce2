"""Policies: anything that picks a move. One async interface for bots, humans and LLMs.

A policy spec is a string users can type: `random`, `bot`, `human`, `local`, `openai:gpt-4o-mini`,
`litellm:anthropic/claude-3-5-haiku`, `hf:Qwen/Qwen2.5-0.5B-Instruct`, `hf:BASE+path/to/adapter`.
Parameters follow after commas: `local,temperature=0.7,max_new_tokens=48`. Every kind the project
ships is one line in KINDS below, naming its factory by string, so heavy SDKs (torch, openai,
litellm) load only when a spec of that kind is made and `arena games` starts at once. Tests and
plugins add kinds at run time with `register_kind`.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import random
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from arena.game import Observation
from arena.redaction import find_secrets, redact


PRIVATE_MASK = "<private>"


def public_text(text: str, private: tuple[str, ...] | list[str]) -> str:
    """`text` with each of a seat's secret phrases (MoveRequest.private) masked: what the other
    seats could know of it. The longest phrase first, so a phrase inside another is not cut."""
    for phrase in sorted(private, key=len, reverse=True):
        if phrase:
            text = text.replace(phrase, PRIVATE_MASK)
    return text


@dataclass
class Exchange:
    """One earlier ask/answer of this player in this match (for full-history prompting)."""

    observation: str
    reply: str
    feedback: str | None = None  # the game's answer when the reply was rejected


@dataclass
class MoveRequest:
    """Everything a policy may use to choose a move. It never holds another player's secrets."""

    game_id: str
    game_name: str
    rules: str
    observation: Observation
    history: list[Exchange] = field(default_factory=list)  # this seat's earlier asks; read-only
    attempt: int = 0  # 0 for the first try at this turn, 1.. for retries after invalid moves
    match_id: str = ""
    match_seed: int = 0  # the seed the match was played with; policies derive theirs (arena.seeding)
    # The game's scripted baseline and random mover for this player (use only its information).
    baseline: Callable[[random.Random], str] | None = None
    random_move: Callable[[random.Random], str] | None = None
    baseline_distribution: Callable[[], dict[str, float] | None] | None = None  # the baseline's move probabilities
    # The game's verdict on a move without playing it (None: accepted), and this seat's legal moves
    # in another notation the game accepts (Game.check_move, Game.move_notation): harness variants
    # (arena.llm.samplers' rethink, arena.llm.prompt_variants) use them; None outside a match.
    check_move: Callable[[str], str | None] | None = None
    move_notation: Callable[[str], list[str] | None] | None = None
    # This seat's own secret phrases as its view shows them (Game.secrets, e.g. "Your private card
    # (Player 0): K"). Masked, they leave the decision's public state: the trainer centres a move's
    # advantage across the private cards of one public state (algorithm.private_contrast).
    private: tuple[str, ...] = ()

    @property
    def player(self) -> int:
        return self.observation.player

    @property
    def legal_moves(self) -> list[str] | None:
        return self.observation.legal_moves


@dataclass
class PolicyReply:
    action: str  # the move text handed to the game
    raw: str = ""  # what the policy actually wrote (an LLM's full reply)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # Set when the reply holds no move in the asked-for format: the driver counts an invalid
    # attempt with this feedback (`Game.reject`) instead of handing `action` to the game.
    rejection: str | None = None


class PolicyFailure(Exception):
    """The policy could not answer at all (provider outage after retries, model crash).
    The driver records it and the game's invalid-move rule applies."""


class PolicySpecError(ValueError):
    """A spec string that names no policy kind or has bad parameters. Its message quotes the spec,
    so it is redacted here, once, whoever raises it."""

    def __init__(self, message: str) -> None:
        super().__init__(redact(message))


class Policy(ABC):
    """Subclasses implement `act`. One policy object may serve many concurrent matches, so it
    keeps no per-match state: everything per match arrives in the MoveRequest."""

    spec: str = ""
    name: str = ""
    # Calls to policies sharing a provider key are limited together by the league runner.
    provider: str = "local-cpu"

    @abstractmethod
    async def act(self, request: MoveRequest) -> PolicyReply: ...

    async def move_distribution(self, request: MoveRequest) -> dict[str, float] | None:
        """The chance of each legal move at this decision, where the policy can state it (exact
        evaluation, evaluation.exploitability); None where its moves can only be drawn."""
        return None

    async def close(self) -> None:
        """Release clients/engines. Safe to call more than once."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec or self.name}>"


@dataclass(frozen=True)
class PolicySpec:
    kind: str  # "random", "openai", "hf", ...
    target: str  # text after "kind:" ("gpt-4o-mini"); empty for kinds without one
    params: dict[str, str]
    text: str  # the spec as the user wrote it
    # Values the command building the policy hands down for parameters the spec leaves unset,
    # each with why (said once where it decides): {"engine": ("hf", "measured faster ...")}.
    defaults: Mapping[str, tuple[str, str]] = field(default_factory=dict, compare=False)

    @classmethod
    def parse(cls, text: str) -> "PolicySpec":
        raw = text.strip()
        if not raw:
            raise PolicySpecError("empty policy spec")
        refuse_literal_secrets(raw)
        head, *param_parts = raw.split(",")
        params: dict[str, str] = {}
        for part in param_parts:
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise PolicySpecError(f"policy spec {raw!r}: parameter {part!r} is not key=value")
            params[key.strip()] = value.strip()
        kind, _, target = head.partition(":")
        return cls(kind=kind.strip().lower(), target=target.strip(), params=params, text=raw)


def refuse_literal_secrets(spec: str) -> None:
    """Keys come from environment variables; a spec carrying one would end up in logs, the store
    and exports, so it is refused, naming what was found and showing the spec redacted."""
    found = find_secrets(spec)
    if found:
        raise PolicySpecError(
            f"policy spec {redact(spec)!r} holds a literal secret ({', '.join(found)}): export it in an environment "
            "variable and name that with api_key_env=VAR (base_url without user:password@)"
        )


PolicyFactory = Callable[[PolicySpec], Policy]


@dataclass(frozen=True)
class KindEntry:
    factory: str  # "module:function", imported when a spec of the kind is first made
    example: str  # a spec of the kind, for help texts and errors


# Every policy kind the project ships, one line each: adding a kind is its factory plus its line
# here. tests/test_policy_kinds.py fails on a line whose module or factory is gone.
KINDS: dict[str, KindEntry] = {
    "random": KindEntry("arena.scripted:random_policy", "random"),
    "bot": KindEntry("arena.scripted:bot_policy", "bot"),
    "human": KindEntry("arena.human:human_policy", "human"),
    "http": KindEntry("arena.http_agent:http_agent_policy", "http:http://127.0.0.1:9000/move"),
    "https": KindEntry("arena.http_agent:http_agent_policy", "https://agents.example.org/move"),
    "openai": KindEntry("arena.llm.openai_policy:make_openai", "openai:gpt-4o-mini[,base_url=URL,mode=tools]"),
    "litellm": KindEntry("arena.llm.litellm_policy:make_litellm", "litellm:anthropic/claude-3-5-haiku-latest[,mode=json]"),
    "hf": KindEntry("arena.llm.local_policy:make_local", "hf:Qwen/Qwen2.5-0.5B-Instruct or hf:BASE+path/to/lora"),
    "local": KindEntry("arena.llm.local_policy:make_local", "local[,temperature=0.7,max_new_tokens=48]"),
}
_ADDED: dict[str, tuple[PolicyFactory, str]] = {}  # kinds added at run time: kind -> (factory, example)


def register_kind(kind: str, factory: PolicyFactory, example: str = "") -> None:
    """Add a kind at run time (a test's or a plugin's); the shipped ones are lines in KINDS."""
    _ADDED[kind] = (factory, example or kind)


def known_kinds() -> dict[str, str]:
    """kind -> example, for every kind (nothing is imported to list them)."""
    return {kind: entry.example for kind, entry in KINDS.items()} | {kind: example for kind, (_, example) in _ADDED.items()}


def kind_factory(kind: str) -> PolicyFactory | None:
    """The factory of `kind`, its module imported now; None for a kind nobody registered."""
    if kind in _ADDED:
        return _ADDED[kind][0]
    entry = KINDS.get(kind)
    if entry is None:
        return None
    module, _, name = entry.factory.partition(":")
    return getattr(importlib.import_module(module), name)


def make_policy(spec: str, defaults: Mapping[str, tuple[str, str]] | None = None) -> Policy:
    """Build a policy from its spec string; a bad spec raises PolicySpecError with suggestions.
    `defaults` ({param: (value, why)}) is what the calling command prefers for parameters the spec
    leaves unset (PolicySpec.defaults); a kind that has no such parameter ignores it."""
    parsed = PolicySpec.parse(spec)
    if defaults:
        parsed = dataclasses.replace(parsed, defaults=dict(defaults))
    factory = kind_factory(parsed.kind)
    if factory is None:
        kinds = list(known_kinds())
        close = difflib.get_close_matches(parsed.kind, kinds, n=3, cutoff=0.4)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise PolicySpecError(
            f"unknown policy {spec!r}{hint} (kinds: {', '.join(sorted(kinds))})"
        )
    policy = factory(parsed)
    policy.spec = parsed.text
    if not policy.name:
        policy.name = parsed.text
    return policy


def float_param(spec: PolicySpec, key: str, default: float) -> float:
    try:
        return float(spec.params.get(key, default))
    except ValueError:
        raise PolicySpecError(f"policy spec {spec.text!r}: {key} must be a number") from None


def int_param(spec: PolicySpec, key: str, default: int | None) -> int | None:
    value = spec.params.get(key)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise PolicySpecError(f"policy spec {spec.text!r}: {key} must be an integer") from None


def reject_unknown_params(spec: PolicySpec, allowed: set[str]) -> None:
    unknown = set(spec.params) - allowed
    if unknown:
        raise PolicySpecError(
            f"policy spec {spec.text!r}: unknown parameter(s) {', '.join(sorted(unknown))}"
            f" (allowed: {', '.join(sorted(allowed)) or 'none'})"
        )
