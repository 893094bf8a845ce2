"""Frozen, versioned benchmark suites: a fixed list of games, seeds and reference opponents whose
Bradley-Terry ratings (the anchors) were fitted once, when the suite was released.

A suite file never changes once released; a change is a new file with a new version. Evaluating a
policy on a suite is a league with a `fixed` schedule (league/scheduling.py): the candidate against
every reference lineup, for every seed, with seats alternated, played by the ordinary runner into
the ordinary store, so it resumes after a crash and shows on the web like any league.
"""

from __future__ import annotations

import itertools
from importlib import resources
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from league.config import LeagueConfig, parse_config
from league.scheduling import stable_seed

SUITE_SUFFIX = ".yaml"


class SuiteError(ValueError):
    """A suite that does not exist or cannot be used as asked: one line."""


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=60)
    spec: str = Field(min_length=1)
    about: str = ""
    anchor: float | None = None  # frozen Bradley-Terry rating (Elo scale), fitted at release


class SuiteGame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    players: int = Field(2, ge=2, le=6)
    options: dict[str, Any] = Field(default_factory=dict)
    seeds: list[int] = Field(min_length=1)
    references: list[str] = Field(default_factory=list)  # empty: every reference plays this game
    about: str = ""


class QuickSubset(BaseModel):
    model_config = ConfigDict(extra="forbid")
    games: list[str] = Field(min_length=1)
    seeds_per_game: int = Field(ge=1)
    references: list[str] = Field(default_factory=list)  # empty: every reference


class Suite(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    released: str
    about: str
    references: list[Reference] = Field(min_length=2)
    games: list[SuiteGame] = Field(min_length=1)
    quick: QuickSubset
    anchor_fit: dict[str, Any] = Field(default_factory=dict)  # how the anchors were fitted (matches, seed)

    @model_validator(mode="after")
    def _consistent(self) -> "Suite":
        names = [r.name for r in self.references]
        if len(set(names)) != len(names):
            raise ValueError("reference names must be unique")
        for game in self.games:
            unknown = sorted(set(game.references) - set(names))
            if unknown:
                raise ValueError(f"games[{game.id}].references: unknown reference {unknown[0]!r}")
            if len(self.references_for(game)) < game.players - 1 or (game.id in self.quick.games and len(self.references_for(game, True)) < game.players - 1):
                raise ValueError(f"games[{game.id}]: {game.players} players need at least {game.players - 1} references")
        missing = sorted(set(self.quick.games) - {g.id for g in self.games})
        if missing:
            raise ValueError(f"quick.games: {missing[0]!r} is not a game of the suite")
        unknown = sorted(set(self.quick.references) - set(names))
        if unknown:
            raise ValueError(f"quick.references: unknown reference {unknown[0]!r}")
        return self

    def references_for(self, game: SuiteGame, quick: bool = False) -> list[Reference]:
        """The references that play `game` (in a quick run, only the quick subset's)."""
        chosen = [r for r in self.references if not game.references or r.name in game.references]
        if quick and self.quick.references:
            chosen = [r for r in chosen if r.name in self.quick.references]
        return chosen

    def games_for(self, quick: bool) -> list[SuiteGame]:
        """The games (and seeds) a run plays: all of them, or the quick subset's first seeds."""
        if not quick:
            return list(self.games)
        chosen = [g for g in self.games if g.id in self.quick.games]
        return [g.model_copy(update={"seeds": g.seeds[: self.quick.seeds_per_game]}) for g in chosen]

    def anchors(self) -> dict[str, float]:
        """Reference name -> frozen rating; empty until the suite's anchors are fitted."""
        return {r.name: r.anchor for r in self.references if r.anchor is not None}

    def store_name(self, reference: str) -> str:
        """How a reference is named in the store: namespaced, so no user policy is overwritten."""
        return f"{self.name}/{reference}"


def available_suites() -> list[str]:
    files = resources.files(__name__)
    return sorted(f.name.removesuffix(SUITE_SUFFIX) for f in files.iterdir() if f.name.endswith(SUITE_SUFFIX))


def load_suite(name: str) -> Suite:
    """The released suite `name` (e.g. core-v1); one-line SuiteError when unknown or malformed."""
    if name not in available_suites():
        raise SuiteError(f"unknown suite {name!r} (suites: {', '.join(available_suites())})")
    text = resources.files(__name__).joinpath(name + SUITE_SUFFIX).read_text(encoding="utf-8")
    try:
        return Suite.model_validate(yaml.safe_load(text))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SuiteError(f"suite {name}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def lineups(suite: Suite, game: SuiteGame, size: int, quick: bool = False) -> list[tuple[str, ...]]:
    """Groups of `size` distinct references that share a match of `game`, in a fixed order."""
    return list(itertools.combinations([r.name for r in suite.references_for(game, quick)], size))


def evaluation_league(suite: Suite, spec: str, name: str, *, quick: bool = False) -> LeagueConfig:
    """The league that evaluates policy `spec` (stored as `name`) on `suite`: every lineup of
    references, every seed; two-player games are played from both seats with the same seed, and
    in N-player games the candidate's seat moves round with the seed."""
    if name in {suite.store_name(r.name) for r in suite.references}:
        raise SuiteError(f"--name {name!r} is the store name of a reference of {suite.name}: choose another")
    matches: list[dict[str, Any]] = []
    for game in suite.games_for(quick):
        for s, seed in enumerate(game.seeds):
            for g, group in enumerate(lineups(suite, game, game.players - 1, quick)):
                seats_of_candidate = range(game.players) if game.players == 2 else [(s + g) % game.players]
                for seat in seats_of_candidate:
                    seats = [suite.store_name(r) for r in group]
                    seats.insert(seat, name)
                    key = f"{game.id}:{seed}:{'+'.join(group)}:seat{seat}"
                    matches.append({"key": key, "game": game.id, "seats": seats, "seed": stable_seed(suite.name, game.id, seed)})
    return _league(suite, f"eval {suite.name}{' quick' if quick else ''}: {name}", [(name, spec)], matches, quick)


def anchor_league(suite: Suite) -> LeagueConfig:
    """The references among themselves on every game and seed of the full suite: the tournament
    whose Bradley-Terry fit gives the anchors (fitted once, at release)."""
    matches: list[dict[str, Any]] = []
    for game in suite.games:
        for s, seed in enumerate(game.seeds):
            for group in lineups(suite, game, game.players):
                orders = [group, group[::-1]] if game.players == 2 else [group[s % len(group):] + group[: s % len(group)]]
                for order in orders:
                    key = f"{game.id}:{seed}:{'+'.join(order)}"
                    matches.append({"key": key, "game": game.id, "seats": [suite.store_name(r) for r in order], "seed": stable_seed(suite.name, game.id, seed)})
    return _league(suite, f"anchors {suite.name}", [], matches, quick=False)


def _league(suite: Suite, league_name: str, extra: list[tuple[str, str]], matches: list[dict[str, Any]], quick: bool) -> LeagueConfig:
    games = suite.games_for(quick)
    # Only references with a seat in the schedule: the runner builds every listed policy, and
    # building the LLM reference loads its model, which a --quick run never plays.
    seated = {name for match in matches for name in match["seats"]}
    policies = [
        {"name": suite.store_name(r.name), "spec": r.spec, "meta": {"suite": suite.name, "reference": r.name}}
        for r in suite.references if suite.store_name(r.name) in seated
    ]
    policies += [{"name": name, "spec": spec} for name, spec in extra]
    data = {
        "name": league_name, "seed": 0, "scheduler": "fixed", "concurrency": 8,
        "games": [{"id": g.id, "players": g.players, "options": g.options} for g in games],
        "policies": policies, "matches": matches,
    }
    return parse_config(data, f"suite {suite.name}")
