"""Rollouts: games played through the league's own match driver and LLM policy code.

The learner's seats are played by `training_policy`, a `LocalPolicy` (same prompts, same parser,
same engine as `hf:BASE+ADAPTER` in the league) that also records the exact prompt and reply token
ids of every turn in `PolicyReply.meta`, which the driver copies into `TurnRecord.meta`. So what
is trained is exactly what was sampled, and evaluation can never disagree with training on rules,
prompts or parsing. In choice mode (rollout.mode) the reply is the drawn legal move's tokens plus
end-of-turn, and the meta also keeps every legal move's reply ids and log-prob as the whole reply
(`option_ids`, `option_logprobs`), which one was drawn (`chosen`) and at what temperature: the
learner recomputes the draw's probability from them (trainer.learner, choice samples).

A step's games are planned as groups: `group_size` games of one game id from one seed with the
same seats. `in_flight` games run at once on one event loop (the engine batches their moves);
when one finishes the next starts, so one long game never holds the others back. The games of a
group share the game's seed but not the learner's sampling seeds (those also depend on the
game's match id), or a group would be `group_size` copies of one game and carry no signal.

On vLLM (`rollout.engine`), the learner's replies are sampled by the vLLM engine with the live
adapter as a LoRA request. On either engine the ids trained on are the exact ids the engine was
given and sampled, and each turn also keeps the sampler's log-prob of every sampled token
(`completion_logprobs`), from which the learner measures (and corrects) the sampler/learner
mismatch. After every update `VLLMAdapterSync` saves the adapter to
a fresh folder and points the engine's live adapter at it (a new LoRA request, loaded into the
running engine: no restart, no reload of the base).
"""

from __future__ import annotations

import asyncio
import math
import random
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from arena.llm.engines import EngineOptions
from arena.llm.engines.scoring import choice_probabilities
from arena.llm.harness import Harness
from arena.llm.llm_policy import LLMSettings
from arena.llm.local_policy import LocalPolicy
from arena.llm.prompting import Mode, ObsMode
from arena.llm.prompt_variants import PromptVariant
from arena.match import MatchRecord, play_match
from arena.policy import Policy, make_policy
from games.registry import make_game
from trainer.branching import BranchPoint, choose_branch, replay_seats
from trainer.config import GameSettings, OpponentSettings, RolloutSettings
from trainer.learner import Sample
from trainer.opponent_sampling import sample_opponents

LEARNER = "__learner__"  # seat marker in a plan


def learner_settings(rollout: RolloutSettings) -> LLMSettings:
    """The learner answers in free text, or in choice mode (rollout.mode); either way its reply
    tokens are what is trained."""
    return LLMSettings(
        temperature=rollout.temperature, top_p=rollout.top_p, max_new_tokens=rollout.max_new_tokens,
        mode=Mode(rollout.mode), obs=ObsMode(rollout.obs), harness=Harness(prompt=PromptVariant.parse(rollout.prompt)),
    )


def learner_temperature(rollout: RolloutSettings) -> float:
    """The temperature of the learner's per-token log-probs: the sampling one for text replies;
    1 in choice mode, where the move's score is the plain sum of its tokens' log-probs and the
    temperature acts on whole moves."""
    return 1.0 if rollout.mode == "choice" else rollout.temperature


def checkpoint_play_params(rollout: RolloutSettings) -> str:
    """Spec parameters that make a lagged checkpoint play as it was trained, on top of its league
    spec (trainer.run.checkpoint_spec, which already names a choice run's mode and temperature)."""
    sampling = "" if rollout.mode == "choice" else f",temperature={rollout.temperature:g}"
    return f"{sampling},max_new_tokens={rollout.max_new_tokens}"


def training_policy(
    base: str, adapter: str, rollout: RolloutSettings, name: str = "learner", engine: str = "hf", options: EngineOptions | None = None,
) -> LocalPolicy:
    """The live adapter as a league policy that records token ids (and the sampler's log-probs)
    for the loss: `LocalPolicy` with `record_tokens`.

    `engine`: "hf" samples on the learner's own transformers model (the adapter trained in
    place); "vllm" on the vLLM engine, where the same adapter key names the LoRA request that
    `VLLMAdapterSync` replaces after each update; "auto" as for any local policy. Choice-mode
    scoring runs where `scoring_engine` says: on vLLM that is the hf engine, through the live
    adapter itself."""
    policy = LocalPolicy(base, adapter, learner_settings(rollout), engine, record_tokens=True, options=options)
    policy.spec = f"hf:{base}+{adapter}"
    policy.name = name
    return policy


def turn_sample(meta: dict[str, Any], advantage: float, *, learner_engine: bool = False, top_p: float = 1.0) -> Sample:
    """The learner's sample of one recorded turn of `training_policy`: its exact ids, and for a
    choice-mode draw every legal move's ids and the draw's temperature. The sampler's log-probs
    (per token, or the scoring's probability of the draw) are what the learner checks its own
    against, or takes as its own (`Sample.sampled_by_learner`) where the turn was produced by the
    learner's engine itself (`learner_engine`: rollouts in the trainer's process): a choice draw is
    always scored on the hf engine; a text reply only when generated there (engine label "hf")
    from the whole vocabulary (top_p 1)."""
    prompt_ids, completion_ids = list(meta["prompt_ids"]), list(meta["completion_ids"])
    label = str(meta.get("engine") or "")
    if meta.get("option_ids") is not None:
        temperature = float(meta["choice_temperature"])
        chosen = int(meta["chosen"])
        drawn = choice_probabilities(list(meta["option_logprobs"]), temperature)[chosen]
        return Sample(prompt_ids, completion_ids, advantage, option_ids=[list(ids) for ids in meta["option_ids"]],
                      chosen=chosen, choice_temperature=temperature, sampler_logps=[math.log(drawn)] if drawn > 0 else None,
                      sampled_by_learner=learner_engine and label.endswith("hf"))
    sampled = meta.get("completion_logprobs")
    return Sample(prompt_ids, completion_ids, advantage, sampler_logps=list(sampled) if sampled is not None else None,
                  sampled_by_learner=learner_engine and label == "hf" and top_p >= 1.0)


def save_adapter_version(learner: Any, folder: Path, step: int) -> Path:
    """The learner's adapter saved as `folder/vSTEP`, complete before it has that name (a reader
    never loads half a folder): the version samplers load after an update."""
    final = folder / f"v{step}"
    partial = final.with_name(final.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    learner.save_adapter(partial)
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    return final


class VLLMAdapterSync:
    """Keeps the vLLM engine's live adapter equal to the learner's.

    `publish` saves the learner's adapter as run_dir/.vllm-adapters/vSTEP (complete before it has
    its name) and has the engine serve the live adapter's key from it: a new LoRA request, loaded
    into the running engine before `publish` returns. The two newest folders stay on disk."""

    KEEP = 2

    def __init__(self, engine: Any, live_key: str, run_dir: Path):
        self.engine = engine
        self.live_key = live_key
        self.folder = run_dir / ".vllm-adapters"
        self.published: list[Path] = []

    def publish(self, learner: Any, step: int) -> str:
        """Returns the LoRA name the engine uses for the live adapter from now on."""
        final = save_adapter_version(learner, self.folder, step)
        self.engine.reload_adapter(self.live_key, weights_from=str(final))
        if final in self.published:
            self.published.remove(final)
        self.published.append(final)
        for old in self.published[: -self.KEEP]:  # no request will name them again
            shutil.rmtree(old, ignore_errors=True)
        self.published = self.published[-self.KEEP:]
        return self.engine.lora_request(self.live_key).lora_name

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass
class GamePlan:
    """One game to play: its seats are LEARNER or an opponent spec."""

    group: str  # same for every game of the group; advantage groups add the seat
    game: GameSettings
    seed: int
    seats: list[str]
    source: str  # the opponent kind: self, lagged, league, bot
    branch: BranchPoint | None = None  # start by replaying this prefix (rollout.branch, trainer.branching)

    @property
    def learner_seats(self) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s == LEARNER]

    @property
    def opponent(self) -> str | None:
        others = [s for s in self.seats if s != LEARNER]
        return others[0] if others else None


@dataclass
class OpponentPool:
    """Chooses opponents; keeps the learner's score against each for PFSP (wins + draws/2)."""

    sources: list[OpponentSettings]
    checkpoints: list[str] = field(default_factory=list)  # specs of this run's checkpoints, oldest first
    results: dict[str, list[float]] = field(default_factory=dict)  # spec -> [score sum, games]

    def win_rates(self) -> dict[str, float]:
        return {k: v[0] / v[1] for k, v in self.results.items() if v[1] > 0}

    def record(self, opponent: str, score: float) -> None:
        entry = self.results.setdefault(opponent, [0.0, 0.0])
        entry[0] += score
        entry[1] += 1

    def draw(self, rng: random.Random) -> tuple[str, str | None]:
        """(source kind, opponent spec or None for self-play)."""
        source = rng.choices(self.sources, weights=[s.weight for s in self.sources], k=1)[0]
        if source.kind == "self":
            return "self", None
        if source.kind == "lagged":
            picked = sample_opponents(self.checkpoints, self.win_rates(), source.sampling, rng, 1, source.weighting, current=LEARNER)[0]
            return ("lagged", picked) if picked != LEARNER else ("self", None)  # no checkpoint yet
        if source.kind == "league":
            return "league", sample_opponents(source.policies, self.win_rates(), "pfsp", rng, 1, source.weighting)[0]
        return "bot", rng.choice(source.policies)

    def state_dict(self) -> dict[str, Any]:
        return {"checkpoints": list(self.checkpoints), "results": {k: list(v) for k, v in self.results.items()}}

    def load_state(self, state: dict[str, Any]) -> None:
        self.checkpoints = list(state.get("checkpoints", []))
        self.results = {k: list(v) for k, v in state.get("results", {}).items()}


def plan_games(
    games: Sequence[GameSettings],
    pool: OpponentPool,
    settings: RolloutSettings,
    rng: random.Random,
    step: int,
    previous: Sequence[MatchRecord] = (),
) -> list[GamePlan]:
    """groups_per_step groups of group_size games each (same game, seed and seats per group). With
    `rollout.branch` = b, each group starts with chance b from a position of one of `previous` (the
    last step's games) instead of the reset (trainer.branching)."""
    plans: list[GamePlan] = []
    for g in range(settings.groups_per_step):
        game = rng.choices(list(games), weights=[x.weight for x in games], k=1)[0]
        seed = rng.randrange(2**31)
        branch = choose_branch(previous, game.id, rng) if settings.branch and rng.random() < settings.branch else None
        source, opponent = pool.draw(rng)
        if opponent is None:
            seats = [LEARNER] * game.players
        else:
            seats = [opponent] * game.players
            seats[rng.randrange(game.players)] = LEARNER  # the learner plays every role over time
        if branch is not None:
            seed = branch.seed
        group = f"s{step}g{g}:{game.id}:{seed}" + (f"@{len(branch.prefix)}" if branch is not None else "")
        plans.extend(GamePlan(group, game, seed, list(seats), source, branch) for _ in range(settings.group_size))
    return plans


@dataclass
class RolloutResult:
    records: list[tuple[GamePlan, MatchRecord]]
    seconds: float


async def play_games(
    plans: Sequence[GamePlan],
    learner: Policy,
    opponent_policy: Callable[[str], Policy],
    settings: RolloutSettings,
    on_game: Callable[[GamePlan, MatchRecord], None] | None = None,
) -> RolloutResult:
    """Play every plan, keeping `in_flight` games running: a worker takes the next plan as soon
    as its game ends."""
    started = time.perf_counter()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(plans)):
        queue.put_nowait(i)
    results: list[MatchRecord | None] = [None] * len(plans)

    async def worker() -> None:
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            plan = plans[i]
            game = make_game(plan.game.id, plan.game.players, **plan.game.options)
            seats = [learner if s == LEARNER else opponent_policy(s) for s in plan.seats]
            seats = replay_seats(seats, plan.branch.prefix if plan.branch is not None else ())
            record = await play_match(game, seats, plan.seed, move_timeout=settings.move_timeout, match_id=f"{plan.group}:{i}")
            results[i] = record
            if on_game is not None:
                on_game(plan, record)

    workers = [asyncio.create_task(worker()) for _ in range(min(settings.in_flight, len(plans)))]
    try:
        await asyncio.gather(*workers)
    finally:
        for task in workers:
            task.cancel()
    done = [(plan, record) for plan, record in zip(plans, results) if record is not None]
    return RolloutResult(done, time.perf_counter() - started)


class OpponentCache:
    """One policy object per opponent spec, built on first use (a checkpoint adapter loads once),
    with the run's `defaults` for parameters a spec leaves unset (the learner's engine)."""

    def __init__(self, defaults: dict[str, tuple[str, str]] | None = None) -> None:
        self.policies: dict[str, Policy] = {}
        self.defaults = defaults

    def __call__(self, spec: str) -> Policy:
        policy = self.policies.get(spec)
        if policy is None:
            policy = self.policies[spec] = make_policy(spec, self.defaults)
        return policy

    async def close(self) -> None:
        for policy in self.policies.values():
            await policy.close()
