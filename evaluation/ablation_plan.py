"""What `arena ablate` plays: a baseline policy, its variants and a null variant, each played
against the baseline on both seats of the same chance seed, as an ordinary league with a `fixed`
schedule (league/scheduling.py). The runner plays it concurrently into the ordinary store and
resumes it after a crash; the report (ablation_report.py) reads the pairs back from the store.

The plan comes from a YAML file or from flags, validated here with one-line errors that name the
file's key or the flag. Policies are stored under their names (default: the spec), exactly like a
league's `policies[].name`, so a variant is one row wherever it plays.

The null variant is the baseline with draws of its own. A copy with the very same spec would
measure nothing where draws come from the seat (random, bot, local, hf: arena/seeding.py): in a
pair the copy in seat 0 draws what the baseline drew in seat 0 of the swapped game, both games
come out the same, and every pair difference is exactly 0. So the null gets `seed=` (its own
stream, the same distribution of play) where the baseline's kind seeds from the seat or the
baseline's spec sets a seed; an API kind without `seed=` sends no seed to its provider, so its
draws are already independent and the null keeps the spec, under another name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from league.config import DEFAULT_MOVE_TIMEOUT_S, ConfigError, LeagueConfig, check_spec, location, parse_config, read_yaml, validated
from league.scheduling import stable_seed

# Kinds whose draws come from the seat's seed unless the spec sets `seed=` (arena/seeding.py).
SEAT_SEEDED_KINDS = frozenset({"random", "bot", "local", "hf"})
NULL_SUFFIX = " (null)"
SEED_SPACE = 2**31  # chance seeds and the null's seed: non-negative int32, which every engine takes
LEAGUE_PREFIX = "ablate "
# Flag names for the plan's keys, so an error in flags names the flag, not a YAML key.
FLAGS = {"baseline": "--policy", "variants": "--variant", "games": "--game", "pairs": "--pairs", "seed": "--seed", "name": "--name", "null_variant": "--no-null", "all_pairs": "--all-pairs"}


class PlanError(ConfigError):
    """A plan that cannot be played: one line naming the file's key or the flag."""


def named_spec(text: str) -> tuple[str, str]:
    """`NAME=SPEC` or a bare `SPEC` (its name is the spec). A spec's first `=` always follows a
    comma (kind[:target],key=value), so text before the first `=` without `,` or `:` is a name."""
    head, sep, rest = text.partition("=")
    if sep and head.strip() and not any(c in head for c in ",:") and rest.strip():
        return head.strip(), rest.strip()
    return text.strip(), text.strip()


class PlanPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    spec: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            name, spec = named_spec(value)
            return {"name": name, "spec": spec}
        if isinstance(value, dict) and "spec" in value and not value.get("name"):
            return {**value, "name": str(value["spec"]).strip()}
        return value

    @field_validator("name", "spec")
    @classmethod
    def _stripped(cls, value: str) -> str:
        return value.strip()


class PlanGame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        return {"id": value} if isinstance(value, str) else value


class AblationPlan(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field("", max_length=150)  # the league is `ablate NAME`; default: the baseline's name
    db: str | None = None  # SQLAlchemy URL; --db and $ARENA_DB override
    baseline: PlanPolicy
    variants: list[PlanPolicy] = Field(default_factory=list)
    null_variant: bool = True  # add the null variant (the baseline with draws of its own); `null:` would be YAML's null
    all_pairs: bool = False  # the variants also play each other (the null plays only the baseline)
    games: list[PlanGame] = Field(min_length=1)
    pairs: int = Field(ge=1, le=100_000)  # chance seeds per game; each is one pair of every comparison
    seed: int = 0
    concurrency: int = Field(8, ge=1, le=4096)
    move_timeout: float | None = Field(DEFAULT_MOVE_TIMEOUT_S, gt=0)  # the league's default; null = no limit

    @field_validator("variants", mode="before")
    @classmethod
    def _mapping_is_named(cls, value: Any) -> Any:
        if isinstance(value, dict):  # {vote3: SPEC, ...}
            return [{"name": str(name), **spec} if isinstance(spec, dict) else {"name": str(name), "spec": spec} for name, spec in value.items()]
        return value

    @field_validator("games", mode="before")
    @classmethod
    def _one_game(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> "AblationPlan":
        self.name = (self.name or self.baseline.name).strip()
        if not self.variants and not self.null_variant:
            raise ValueError("nothing to compare: give at least one variant, or keep the null variant (null_variant: true)")
        entries = self.entries()
        names = [p.name for p, _ in entries]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"policy names must be unique; repeated: {', '.join(repeated)} (name a variant NAME=SPEC)")
        specs = [p.spec for p, role in entries if role != "null"]
        copies = sorted({s for s in specs if specs.count(s) > 1})
        if copies:
            raise ValueError(f"two policies share the spec {copies[0]!r}; a copy of the baseline is the null variant (on by default), "
                             "which gets draws of its own: a same-spec copy would replay the baseline's games")
        ids = [g.id for g in self.games]
        if len(set(ids)) != len(ids):
            raise ValueError(f"each game may appear once; repeated: {', '.join(sorted({i for i in ids if ids.count(i) > 1}))}")
        return self

    # ---- who plays ------------------------------------------------------------------------------
    def null_policy(self) -> PlanPolicy:
        return PlanPolicy(name=self.baseline.name + NULL_SUFFIX, spec=null_spec(self.baseline.spec))

    def entries(self) -> list[tuple[PlanPolicy, str]]:
        """(policy, role) in a fixed order: the baseline, the null variant, the variants."""
        out = [(self.baseline, "baseline")]
        if self.null_variant:
            out.append((self.null_policy(), "null"))
        return out + [(v, "variant") for v in self.variants]

    def comparisons(self) -> list[tuple[str, str, str]]:
        """(policy, against, role): every variant against the baseline; with `all_pairs`, every
        two variants too ('pair'); last the null variant against the baseline, the noise reference."""
        base = self.baseline.name
        names = [v.name for v in self.variants]
        out = [(name, base, "variant") for name in names]
        if self.all_pairs:
            out += [(a, b, "pair") for i, a in enumerate(names) for b in names[i + 1 :]]
        return out + ([(self.null_policy().name, base, "null")] if self.null_variant else [])

    @property
    def league_name(self) -> str:
        return LEAGUE_PREFIX + self.name

    def chance_seed(self, game: str, pair: int) -> int:
        """The game seed of pair `pair`: the same for every comparison (every variant meets the
        baseline on the same deals), distinct across pairs by construction."""
        return (stable_seed(self.seed, "ablate", game) + pair) % SEED_SPACE

    def league_config(self) -> LeagueConfig:
        """The league that plays the plan: for each pair index, game and comparison, two matches
        on the same chance seed with the seats swapped, listed together so pairs finish together."""
        index = {p.name: i for i, (p, _) in enumerate(self.entries())}
        matches = []
        for pair in range(self.pairs):
            for game in self.games:
                seed = self.chance_seed(game.id, pair)
                for a, b, _ in self.comparisons():
                    for order, seats in (("ab", [a, b]), ("ba", [b, a])):
                        key = f"{game.id}:{pair}:{index[a]}v{index[b]}:{order}"
                        matches.append({"key": key, "game": game.id, "seats": seats, "seed": seed})
        data = {
            "name": self.league_name, "seed": self.seed, "scheduler": "fixed", "concurrency": self.concurrency,
            "move_timeout": self.move_timeout,
            "games": [{"id": g.id, "players": 2, "options": g.options} for g in self.games],
            "policies": [{"name": p.name, "spec": p.spec} for p, _ in self.entries()],
            "matches": matches,
        }
        return parse_config(data, f"ablation {self.name!r}")


def null_spec(spec: str) -> str:
    """The baseline's spec with a `seed=` of its own where that gives it independent draws (the
    module docstring says why); unchanged otherwise."""
    from arena.policy import PolicySpec

    parsed = PolicySpec.parse(spec)
    if parsed.kind not in SEAT_SEEDED_KINDS and "seed" not in parsed.params:
        return parsed.text
    seed = stable_seed("null", parsed.text) % SEED_SPACE
    if parsed.params.get("seed") == str(seed):
        seed = (seed + 1) % SEED_SPACE
    head, *params = parsed.text.split(",")
    kept = [p for p in params if p.partition("=")[0].strip() != "seed"]
    return ",".join([head, *kept, f"seed={seed}"])


def _where(key: str, label: object, flags: bool) -> str:
    """Where a problem sits: the flag (`--variant vote3`) or the file's key (`variants.vote3`)."""
    if flags:
        return f"{FLAGS[key]} {label}".rstrip()
    return {"baseline": "baseline", "variants": f"variants.{label}", "games": f"games[{label}]"}[key]


def check_plan(plan: AblationPlan, source: str, flags: bool) -> None:
    """What pydantic cannot see: policy kinds (nothing is built or contacted) and that every game
    is a two-player game (a pair swaps two seats)."""
    from games.registry import make_game

    for policy, role in plan.entries():
        problem = None if role == "null" else check_spec(policy.spec)
        if problem:
            where = _where("baseline", "", flags) if role == "baseline" else _where("variants", policy.name, flags)
            raise PlanError(f"{source}: {where}: {problem}")
    for i, game in enumerate(plan.games):
        where = _where("games", game.id if flags else i, flags)
        for players, note in ((None, ""), (2, " (an ablation swaps the two seats of a two-player match)")):
            try:
                make_game(game.id, players, **game.options)
            except Exception as exc:  # noqa: BLE001 - every game error becomes one line
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise PlanError(f"{source}: {where}: {detail}{note}") from None


def parse_plan(data: Any, source: str, *, flags: bool = False) -> AblationPlan:
    """Validate settings (a dict) into a plan; every problem is one line naming the key or flag."""
    where = (lambda loc: FLAGS[str(loc[0])] if loc and loc[0] in FLAGS else location(loc)) if flags else location
    plan = validated(AblationPlan, data, source, PlanError, where)
    check_plan(plan, source, flags)
    return plan


def load_plan(path: str | Path) -> AblationPlan:
    """The plan in a YAML file (read as league files are)."""
    try:
        data = read_yaml(path)
    except ConfigError as exc:
        raise PlanError(str(exc)) from None
    return parse_plan(data, str(path))
