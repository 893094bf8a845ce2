"""League configuration: YAML validated by pydantic, errors as one line naming file, key and problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


class ConfigError(ValueError):
    """One line: `FILE: KEY.PATH: problem`."""


class GameEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    weight: float = Field(1.0, gt=0)
    players: int = Field(2, ge=1, le=16)
    options: dict[str, Any] = Field(default_factory=dict)


class PolicyEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    spec: str
    name: str = ""

    @model_validator(mode="after")
    def _default_name(self) -> "PolicyEntry":
        if not self.name:
            self.name = self.spec
        return self


class LeagueConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = "league"
    db: str | None = None
    seed: int = 0
    scheduler: Literal["round_robin", "swiss", "adaptive"] = "round_robin"
    matches_per_pair: int | None = Field(None, ge=1)
    budget: int | None = Field(None, ge=1)
    rounds: int | None = Field(None, ge=1)
    concurrency: int = Field(8, ge=1, le=4096)
    provider_limits: dict[str, int] = Field(default_factory=dict)
    move_timeout: float | None = Field(None, gt=0)
    games: list[GameEntry] = Field(min_length=1)
    policies: list[PolicyEntry] = Field(min_length=2)

    @field_validator("policies", mode="before")
    @classmethod
    def _strings_are_specs(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"spec": item} if isinstance(item, str) else item for item in value]
        return value

    @model_validator(mode="after")
    def _check(self) -> "LeagueConfig":
        names = [p.name for p in self.policies]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"policy names must be unique; repeated: {', '.join(duplicates)} (give each a name:)")
        if self.scheduler == "adaptive" and self.budget is None:
            raise ValueError("the adaptive scheduler needs `budget` (number of matches)")
        return self


def _location(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def load_config(path: str | Path) -> LeagueConfig:
    """Parse and check a league file, including game ids and policy kinds."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: no such file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "YAML"
        raise ConfigError(f"{path}: {where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: (top level): expected a mapping of settings")
    try:
        config = LeagueConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{path}: {_location(first['loc'])}: {message}") from None
    _check_names(path, config)
    return config


def _check_names(path: Path, config: LeagueConfig) -> None:
    from arena.policy import PolicySpec, PolicySpecError, known_kinds
    from games.registry import make_game

    for i, game in enumerate(config.games):
        try:
            make_game(game.id, game.players, **game.options)
        except Exception as exc:  # noqa: BLE001 - every game error becomes one config line
            raise ConfigError(f"{path}: games[{i}].id: {exc}") from None
    kinds = known_kinds()
    for i, policy in enumerate(config.policies):
        try:
            kind = PolicySpec.parse(policy.spec).kind
        except PolicySpecError as exc:
            raise ConfigError(f"{path}: policies[{i}].spec: {exc}") from None
        if kind not in kinds:
            import difflib

            close = difflib.get_close_matches(kind, list(kinds), n=1, cutoff=0.4)
            hint = f"; did you mean {close[0]}?" if close else f" (kinds: {', '.join(sorted(kinds))})"
            raise ConfigError(f"{path}: policies[{i}].spec: unknown policy {policy.spec!r}{hint}")
