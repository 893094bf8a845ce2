"""League configuration: YAML validated by pydantic. Every error is ONE line naming the file, the
key path and the problem, e.g.

    league.yaml: policies[2].spec: unknown policy 'opnai:gpt-4o'; did you mean openai?

Policy specs are checked lazily: the spec must parse and name a kind that is registered or one
the project ships (local, hf, openai, litellm), but no model is loaded or contacted until the
league runs, so a config validates on a machine without the weights or the keys.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from pathlib import Path
from typing import Any, Callable, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from league.scheduling import GameSlot, Pairing, Scheduler, make_scheduler

SCHEDULERS = ("round_robin", "swiss", "adaptive", "fixed")
# Seconds a policy may take for one move before the game's invalid-move rule applies. A default,
# so that no untrusted policy (an outside agent) can hold a match forever; `move_timeout: null`
# turns it off, a larger value raises it.
DEFAULT_MOVE_TIMEOUT_S = 120.0


class ConfigError(ValueError):
    """One line: `FILE: KEY.PATH: problem`."""


class GameEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    weight: float = Field(1.0, gt=0)
    players: int = Field(2, ge=1, le=16)
    options: dict[str, Any] = Field(default_factory=dict)


class MatchEntry(BaseModel):
    """One match of a `fixed` schedule: its key (unique in the league), game, seats and seed."""

    model_config = ConfigDict(extra="forbid")
    key: str = Field(min_length=1, max_length=300)
    game: str = Field(min_length=1)
    seats: list[str] = Field(min_length=1)
    seed: int


class PolicyEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    spec: str = Field(min_length=1)
    name: str = ""  # how the policy appears in the store and leaderboards (default: the spec)
    meta: dict[str, Any] = Field(default_factory=dict)  # free notes; key-like fields are never stored

    @model_validator(mode="after")
    def _default_name(self) -> "PolicyEntry":
        self.spec = self.spec.strip()
        self.name = (self.name or self.spec).strip()
        return self


class LeagueConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field("league", min_length=1, max_length=200)
    db: str | None = None  # SQLAlchemy URL; --db and $ARENA_DB override
    seed: int = 0
    scheduler: Literal["round_robin", "swiss", "adaptive", "fixed"] = "round_robin"
    matches_per_pair: int | None = Field(None, ge=1, le=100_000)
    budget: int | None = Field(None, ge=1, le=10_000_000)
    concurrency: int = Field(8, ge=1, le=4096)  # matches in flight at once
    provider_limits: dict[str, int] = Field(default_factory=dict)  # Policy.provider -> matches in flight
    move_timeout: float | None = Field(DEFAULT_MOVE_TIMEOUT_S, gt=0)  # seconds per move; null = no limit
    grace_seconds: float = Field(10.0, ge=0)  # after Ctrl-C, how long in-flight matches may finish
    games: list[GameEntry] = Field(min_length=1)
    policies: list[PolicyEntry] = Field(min_length=2)
    matches: list[MatchEntry] = Field(default_factory=list)  # the `fixed` scheduler's list

    @field_validator("policies", mode="before")
    @classmethod
    def _strings_are_specs(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"spec": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("provider_limits")
    @classmethod
    def _positive_limits(cls, value: dict[str, int]) -> dict[str, int]:
        bad = [k for k, v in value.items() if v < 1]
        if bad:
            raise ValueError(f"limits must be at least 1 (got {value[bad[0]]} for {bad[0]!r})")
        return value

    @model_validator(mode="after")
    def _check(self) -> "LeagueConfig":
        names = [p.name for p in self.policies]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"policy names must be unique; repeated: {', '.join(duplicates)} (give each a name:)")
        game_ids = [g.id for g in self.games]
        repeated = sorted({g for g in game_ids if game_ids.count(g) > 1})
        if repeated:
            raise ValueError(f"each game may appear once; repeated: {', '.join(repeated)}")
        if self.scheduler in ("adaptive", "swiss") and self.budget is None:
            raise ValueError(f"the {self.scheduler} scheduler needs `budget` (number of matches)")
        if (self.scheduler == "fixed") != bool(self.matches):
            raise ValueError("`matches` lists the matches of the fixed scheduler, and only of it" if self.matches else "the fixed scheduler needs `matches`")
        if self.scheduler == "round_robin" and self.matches_per_pair is None and self.budget is None:
            self.matches_per_pair = 1
        return self

    def schedule_hash(self) -> str:
        """sha256 of what decides which matches are played; a resumed league must match it."""
        decisive = self.model_dump(include={"seed", "scheduler", "matches_per_pair", "budget", "games"})
        if self.matches:  # absent otherwise, so the hashes of existing leagues do not change
            decisive["matches"] = [m.model_dump() for m in self.matches]
        decisive["policies"] = [[p.name, p.spec] for p in self.policies]
        return hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()

    def stored_config(self) -> dict[str, Any]:
        """What the store keeps about the league (no db URL: it may carry a password)."""
        return self.model_dump(exclude={"db"}, mode="json")


def location(loc: tuple[Any, ...]) -> str:
    """('policies', 2, 'spec') -> 'policies[2].spec'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def parse_config(data: Any, source: str = "league config") -> LeagueConfig:
    """Validate already-loaded settings (a dict) with the same one-line errors as load_config."""
    config = validated(LeagueConfig, data, source)
    check_names(config, source)
    return config


Settings = TypeVar("Settings", bound=BaseModel)


def validated(
    model: type[Settings], data: Any, source: str, error: type[ConfigError] = ConfigError, where: Callable[[tuple[Any, ...]], str] = location,
) -> Settings:
    """`data` (loaded YAML, a dict) as `model`, or `error` in one line: `SOURCE: WHERE: problem`,
    WHERE the key path of pydantic's first problem as `where` writes it."""
    if not isinstance(data, dict):
        raise error(f"{source}: (top level): expected a mapping of settings, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(p for p in first["loc"] if not str(p).startswith("function-"))  # pydantic's validator names
        raise error(f"{source}: {where(loc)}: {first['msg'].removeprefix('Value error, ')}") from None


def load_config(path: str | Path) -> LeagueConfig:
    """Parse and check a league file, including game ids, player counts and policy kinds."""
    return parse_config(read_yaml(path), str(path))


def read_yaml(path: str | Path) -> Any:
    """The settings in a YAML file; a missing file, bad YAML or non-UTF-8 text is one ConfigError line."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "YAML"
        raise ConfigError(f"{path}: {where}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: (file): not UTF-8 text") from None


def check_spec(spec: str) -> str | None:
    """None when `spec` names a policy kind this project can build; else the problem, one line."""
    from arena.policy import PolicySpec, PolicySpecError, known_kinds

    try:
        kind = PolicySpec.parse(spec).kind
    except PolicySpecError as exc:
        return str(exc)
    kinds = set(known_kinds())
    if kind in kinds:
        return None
    close = difflib.get_close_matches(kind, sorted(kinds), n=1, cutoff=0.4)
    hint = f"; did you mean {close[0]}?" if close else f" (kinds: {', '.join(sorted(kinds))})"
    return f"unknown policy {spec!r}{hint}"


def check_names(config: LeagueConfig, source: str) -> None:
    """Game ids, player counts and options are checked by building each game once (cheap);
    policy kinds without building the policy; the schedule by building the scheduler."""
    from games.registry import make_game

    for i, game in enumerate(config.games):
        try:
            make_game(game.id, game.players, **game.options)
        except Exception as exc:  # noqa: BLE001 - every game error becomes one config line
            raise ConfigError(f"{source}: games[{i}].id: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
    for i, policy in enumerate(config.policies):
        problem = check_spec(policy.spec)
        if problem:
            raise ConfigError(f"{source}: policies[{i}].spec: {problem}")
    try:
        build_scheduler(config)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{source}: scheduler: {exc}") from None


def build_scheduler(config: LeagueConfig) -> Scheduler:
    """The scheduler the config describes. It lives here, not in the runner, so that checking a
    config (which builds one) needs nothing above the config."""
    slots = [GameSlot(g.id, g.weight, g.players) for g in config.games]
    return make_scheduler(
        config.scheduler,
        slots,
        [p.name for p in config.policies],
        matches_per_pair=config.matches_per_pair,
        budget=config.budget,
        seed=config.seed,
        fixed=[Pairing(m.key, m.game, tuple(m.seats), m.seed) for m in config.matches],
    )
