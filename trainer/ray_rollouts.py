"""Rollouts on a Ray cluster (`rollout.executor: ray`): `rollout.collectors` actors play each
step's games and hand the records to the learner, which stays in the trainer's process.

How the live adapter reaches the collectors: BY PATH. After every update the learner saves its
adapter to a fresh folder, runs/NAME/.rollout-adapters/vK (written as vK.partial, then renamed),
and every collector copies those weights into its own engine's adapter before it plays again.
So the run folder must be on a filesystem every node sees at the same path (NFS or similar), as
the checkpoints under runs/NAME are for lagged opponents. Each `play` call names the folder too,
so a collector that Ray restarted (max_restarts) catches up before it plays.

A collector is an ordinary rollout process: the same training_policy, OpponentCache and
play_games as trainer/rollouts.py, on its own engine; only where the games run changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from arena.match import MatchRecord
from trainer.config import TrainConfig
from trainer.rollouts import GamePlan, OpponentCache, RolloutResult, play_games, save_adapter_version, training_policy

KEEP_VERSIONS = 2  # published adapter folders kept on disk (the newest is what collectors hold)


class Collector:
    """One rollout engine: the live adapter (weights copied in from published folders), the
    opponents it meets, and the games of the plans it is given."""

    def __init__(self, config: TrainConfig, initial_adapter: str) -> None:
        self.policy = training_policy(config.base, initial_adapter, config.rollout, name=f"{config.name}/live", engine="hf")
        self.engine = self.policy.engine
        self.adapter_key = self.engine.load_adapter(initial_adapter)
        self.opponents = OpponentCache({"engine": ("hf", "Ray collectors sample on their own hf engines")})
        self.settings = config.rollout
        self.holding = initial_adapter  # the folder whose weights the live adapter holds now

    def load(self, folder: str) -> str:
        """Copy the weights saved in `folder` into the live adapter (between batches: the engine's
        model lock keeps a generation from seeing half the new weights)."""
        if folder != self.holding:
            self.engine.reload_adapter(self.adapter_key, weights_from=folder)
            self.holding = folder
        return self.holding

    def status(self) -> dict[str, Any]:
        """The folder held and the sum of |w| over the adapter's weights (to check a sync)."""
        marker = f".{self.engine.adapter_name(self.adapter_key)}."
        total = sum(float(p.detach().abs().double().sum()) for n, p in self.engine.model.named_parameters() if marker in n and "lora_" in n)
        return {"adapter": self.holding, "abs_sum": total}

    async def play(self, plans: list[GamePlan], indices: list[int], adapter: str) -> list[tuple[int, dict[str, Any]]]:
        """Play `plans` with the weights of `adapter`; (plan index, record as JSON types) each."""
        await asyncio.get_running_loop().run_in_executor(None, self.load, adapter)
        result = await play_games(plans, self.policy, self.opponents, self.settings)
        by_plan = {id(plan): record for plan, record in result.records}
        return [(i, by_plan[id(plan)].to_dict()) for i, plan in zip(indices, plans) if id(plan) in by_plan]


class RayRollouts:
    """The learner's side: starts the collectors, publishes adapters, shares out the plans."""

    def __init__(self, config: TrainConfig, run_dir: Path, structure: Path, learner: Any, step: int) -> None:
        """`structure`: an adapter folder that lives as long as the run (the trainer's initial
        adapter), which a (re)started collector loads for the adapter's shape; the weights of
        `learner` at `step` are published, and the first `play` makes collectors load them."""
        import ray

        from league.ray_executor import connect

        rollout = config.rollout
        self.connected = connect(rollout.ray_address)
        self.folder = run_dir / ".rollout-adapters"
        self.published: list[Path] = []
        self.current = self._save(learner, step)
        actor = ray.remote(Collector).options(
            num_cpus=rollout.collector_cpus, num_gpus=rollout.collector_gpus, max_restarts=-1, max_task_retries=-1,
        )
        self.collectors = [actor.remote(config, str(structure.resolve())) for _ in range(rollout.collectors)]

    def _save(self, learner: Any, step: int) -> str:
        """The learner's adapter as folder vSTEP (complete before it has its name)."""
        final = save_adapter_version(learner, self.folder, step)
        self.published.append(final)
        return str(final.resolve())

    async def publish(self, learner: Any, step: int) -> list[str]:
        """Save the learner's adapter as version `step` and have every collector load it now.
        Returns what each collector holds afterwards."""
        self.current = self._save(learner, step)
        held = list(await asyncio.gather(*(c.load.remote(self.current) for c in self.collectors)))
        for old in self.published[:-KEEP_VERSIONS]:  # every collector holds the newest one now
            shutil.rmtree(old, ignore_errors=True)
        self.published = self.published[-KEEP_VERSIONS:]
        return held

    async def status(self) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(c.status.remote() for c in self.collectors)))

    async def play(self, plans: Sequence[GamePlan], on_game: Callable[[GamePlan, MatchRecord], None] | None = None) -> RolloutResult:
        """Whole groups go to one collector each (round robin), so a group's games batch together."""
        started = time.perf_counter()
        shares: list[list[int]] = [[] for _ in self.collectors]
        groups: dict[str, int] = {}
        for i, plan in enumerate(plans):
            shares[groups.setdefault(plan.group, len(groups) % len(self.collectors))].append(i)
        calls = [
            collector.play.remote([plans[i] for i in share], share, self.current)
            for collector, share in zip(self.collectors, shares) if share
        ]
        records: dict[int, MatchRecord] = {}
        for finished in asyncio.as_completed([_await(ref) for ref in calls]):
            for i, data in await finished:
                records[i] = MatchRecord.from_dict(data)
                if on_game is not None:
                    on_game(plans[i], records[i])
        done = [(plans[i], records[i]) for i in sorted(records)]
        return RolloutResult(done, time.perf_counter() - started)

    def close(self) -> None:
        import ray

        for collector in self.collectors:
            with contextlib.suppress(Exception):
                ray.kill(collector)
        self.collectors = []
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.connected:
            self.connected = False
            ray.shutdown()


async def _await(ref: Any) -> Any:
    return await ref
