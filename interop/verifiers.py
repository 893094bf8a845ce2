"""Every playable game as a verifiers (0.4) environment: one seat played by the evaluated model,
the other seats by policy specs, the reward the seat's outcome score.

verifiers 0.4 builds an environment from plugins found by id: a taskset (the tasks: here one per
seed), an `Env` (how a task becomes an episode: here a match driven turn by turn) and a harness
(the program that talks to the model). `load_environment(game=..., opponents=...)` builds that
environment in Python; `vf-eval arena-verifiers --env.taskset.game kuhn_poker ...` finds the same
classes through the top-level `arena_verifiers` module (verifiers imports plugins by a dotless
module name, so they cannot be found inside `interop`).

Each episode runs `arena.seat_environment` (the single-seat view shared with OpenEnv and GEM): the
model's reply is parsed as the league's LLM policy parses it, invalid moves get the game's
feedback and retries, and the finished MatchRecord can be written to a league store
(`store=`), so the rewards verifiers reports can be checked against what our store records.

The harness is verifiers' own tool-less chat program (the `null` harness). verifiers normally
installs that program's packages with `uv` at run time; every one of them is a dependency of
verifiers itself, so `ArenaChatHarness` runs it with this interpreter instead (offline, no uv).
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.harnesses.null import NullHarness

from arena.seat_environment import SeatEnvironment, SeatView
from games.registry import make_game
from interop.episode_store import store_episode
from interop.seat_prompt import first_text, parse_reply, reply_fields, turn_text

TASKSET_ID = "arena-verifiers"
REWARD_NAME = "game_outcome"
PLAYER_NAME = "verifiers-player"  # the evaluated model's seat, as the league store names it


class ArenaTasksetConfig(vf.TasksetConfig):
    """One game, one seat, fixed opponents; one task per seed."""

    game: str = "kuhn_poker"
    opponents: list[str] | None = None  # policy specs for the other seats; default: `random` each
    seat: int = 0
    num_players: int | None = None
    options: dict[str, Any] = {}
    first_seed: int = 0
    num_seeds: int | None = None  # None: unbounded (bound the run with -n)
    store: str | None = None  # a league database (path or URL) that records every episode


class ArenaTaskData(vf.TaskData):
    info: dict[str, Any]
    """The game, seed, seat, opponents and options the episode is played from."""


class ArenaTask(vf.Task[ArenaTaskData, vf.State, vf.TaskConfig]):
    pass


class ArenaTaskset(vf.Taskset[ArenaTask, ArenaTasksetConfig]):
    """Task i plays seed `first_seed + i`. The prompt is left to the episode: the first view
    exists only once the opponents before the model's seat have moved."""

    def __init__(self, config: ArenaTasksetConfig) -> None:
        super().__init__(config)
        probe = make_game(config.game, config.num_players, **config.options)  # bad ids fail here
        self.game_name = probe.name
        self.opponents = list(config.opponents) if config.opponents is not None else ["random"] * (probe.num_players - 1)
        self.INFINITE = config.num_seeds is None

    def load(self) -> Iterator[ArenaTask]:
        seed = self.config.first_seed
        end = None if self.config.num_seeds is None else seed + self.config.num_seeds
        while end is None or seed < end:
            info = {
                "game": self.config.game,
                "game_name": self.game_name,
                "seed": seed,
                "seat": self.config.seat,
                "opponents": self.opponents,
                "num_players": self.config.num_players,
                "options": dict(self.config.options),
                "store": self.config.store,
            }
            yield ArenaTask(ArenaTaskData(name=f"{self.config.game}#seed{seed}", info=info), self.config.task)
            seed += 1


class ArenaEnvConfig(vf.EnvConfig):
    # The chat program runs as a local subprocess: it executes no model-written code, and the
    # episode (opponents included) is in this process anyway; verifiers' default is a remote sandbox.
    player: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class ArenaEnv(vf.Env[ArenaEnvConfig]):
    """One episode: the match runs in-process; each of the model's turns is one user turn."""

    async def run(self, task: Any, agents: Any) -> None:
        info = task.data.info
        environment = SeatEnvironment(make_game=make_game, name=PLAYER_NAME)
        view: SeatView = await environment.reset(
            info["game"],
            seed=info["seed"],
            seat=info["seat"],
            options=info["options"],
            opponents=info["opponents"],
            num_players=info["num_players"],
        )
        try:
            async with agents.player.interaction(task) as interaction:
                text = first_text(view, info["game_name"])
                while not view.done:
                    segment = await interaction.turn(text)
                    if segment.terminated and not segment.last_reply:
                        break  # no answer came (turn limit, provider error): an unfinished game scores 0
                    # An empty reply is a move like any other: the game rejects it with feedback.
                    reply = segment.last_reply or ""
                    parsed = parse_reply(reply, view)
                    view = await environment.step(parsed.action, **reply_fields(reply, parsed))
                    text = turn_text(view)
                    if segment.terminated:
                        break
            trace = interaction.trace
            reward = float(view.reward) if view.done and view.reward is not None else 0.0
            trace.record_reward(REWARD_NAME, reward, 1.0)
            trace.info["game"], trace.info["seed"] = info["game"], info["seed"]
            if view.done:
                trace.info["outcome"] = view.outcome
                if info["store"] and environment.record is not None:  # the store is synchronous: off the loop
                    await asyncio.to_thread(store_episode, info["store"], environment.record)
        finally:
            await environment.close()


class ArenaChatHarness(NullHarness):
    """verifiers' `null` chat program, run by this interpreter rather than a uv-built env."""

    async def setup(self, runtime: Any) -> None:
        """Nothing to install: the chat program's packages come with verifiers."""

    async def launch(self, ctx: Any, trace: Any, runtime: Any, *args: Any, **kwargs: Any) -> Any:
        return await super().launch(ctx, trace, _LocalInterpreter(runtime), *args, **kwargs)


class _LocalInterpreter:
    """The runtime, except that a PEP 723 script runs with this process's interpreter."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def prepare_uv_script(self, script: str | bytes, env: dict[str, str] | None = None, *, activate: bool = True) -> list[str]:
        data = script.encode() if isinstance(script, str) else script
        path = f".arena-chat-{hashlib.sha256(data).hexdigest()[:16]}.py"
        await self._runtime.write(path, data)
        return [sys.executable, path]


def load_environment(
    game: str = "kuhn_poker",
    opponents: list[str] | None = None,
    seat: int = 0,
    num_players: int | None = None,
    options: dict[str, Any] | None = None,
    first_seed: int = 0,
    num_seeds: int | None = None,
    store: str | None = None,
    **env_fields: Any,
) -> ArenaEnv:
    """The verifiers environment for one seat of `game` against `opponents` (policy specs).
    `store`: a league database that records each finished episode. Extra keyword arguments are
    `EnvConfig` fields (e.g. `max_concurrent_agents`)."""
    taskset = ArenaTasksetConfig(
        id=TASKSET_ID,
        game=game,
        opponents=opponents,
        seat=seat,
        num_players=num_players,
        options=dict(options or {}),
        first_seed=first_seed,
        num_seeds=num_seeds,
        store=store,
    )
    return ArenaEnv(ArenaEnvConfig(taskset=taskset, **env_fields))
