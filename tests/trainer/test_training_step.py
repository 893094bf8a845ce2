"""One real training step on the shipped model, checkpoints, registration and resume.

The resume half checks what a killed run needs (adapter, optimizer moments, baselines, opponent
pool, refusal without --resume, a half-written checkpoint ignored) without a second rollout, to
keep the test short on 2 shared cores."""

import asyncio
import json
import math

import httpx
import pytest
import torch

from tests.trainer.conftest import REGISTRATION
from trainer.atropos import IGNORE

from trainer.checkpoints import list_checkpoints
from trainer.config import parse_config
from trainer.run import TrainError, Trainer

pytestmark = pytest.mark.slow


def _config(tmp_path, rollout=None, **algorithm):
    return parse_config({
        "name": "tiny", "output_dir": str(tmp_path / "runs"), "steps": 2, "seed": 1,
        "games": [{"id": "tictactoe"}],
        "rollout": {"groups_per_step": 1, "group_size": 2, "in_flight": 2, "max_new_tokens": 4, **(rollout or {})},
        # SPIRAL's baseline starts at 0, so the very first batch already has non-zero advantages
        "algorithm": {"advantage": "spiral", "epochs": 1, "minibatch_size": 8, "micro_batch_size": 4, "learning_rate": 5e-3, **algorithm},
        "checkpoint": {"every": 1, "db": f"sqlite:///{tmp_path / 'arena.db'}"},
        # each checkpoint plays one league match against each fixed opponent (and they one another)
        "eval": {"games_per_opponent": 1, "opponents": ["bot", "random"], "concurrency": 3},
        "logging": {"wandb": False},
    })


def _check_the_hub_got_the_rollouts(hub, metrics):
    """One group per (game, seed, learner seat) with the engine's own ids: prompt masked, at most
    max_new_tokens generated, one reward per episode (outcome + 0.5 x invalid share)."""
    assert metrics["atropos/groups"] >= 1
    assert httpx.get(hub + "/status").json()["queue_size"] == metrics["atropos/groups"]
    latest = httpx.get(hub + "/latest_example").json()
    assert len(latest["tokens"]) == len(latest["masks"]) == len(latest["scores"]) >= 2  # both games of the group
    for tokens, masks in zip(latest["tokens"], latest["masks"]):
        prompt = masks.count(IGNORE)
        assert len(tokens) == len(masks) and 0 < prompt < len(tokens) <= prompt + 4
        assert masks[:prompt] == [IGNORE] * prompt and masks[prompt:] == tokens[prompt:]
    assert all(-1.5 <= score <= 1.0 for score in latest["scores"])


def test_one_step_changes_the_adapter_then_resumes(tmp_path, hub_if_installed):
    # the step's rollouts also go to an Atropos hub (rollout.sink), checked after the step
    hub = hub_if_installed
    config = _config(tmp_path, rollout={"sink": "atropos", "atropos_url": hub} if hub else None, kl_coef=0.05)
    if hub:
        assert "uuid" in httpx.post(hub + "/register", json=REGISTRATION).json()
    trainer = Trainer(config)
    trainer.setup()
    before = {k: v.detach().clone() for k, v in trainer.learner.params.items()}
    [report] = asyncio.run(trainer.train(stop_after=1))
    m = report.metrics
    assert m["samples"] > 0 and m["train/optimizer_steps"] == 1
    assert math.isfinite(m["train/loss"]) and math.isfinite(m["train/kl"]) and m["train/entropy"] > 0
    changed = [k for k, v in trainer.learner.params.items() if not torch.equal(before[k], v)]
    assert changed, "the LoRA weights did not move"
    # every sample is one learner turn with the exact sampled ids: replies within max_new_tokens
    logged = [json.loads(line) for line in (config.run_dir / "metrics.jsonl").read_text().splitlines()]
    assert logged[-1]["step"] == 1 and logged[-1]["samples"] == m["samples"]
    if hub:
        _check_the_hub_got_the_rollouts(hub, m)

    # the checkpoint is a loadable peft folder, registered in the league store
    [(step, folder)] = list_checkpoints(config.run_dir)
    assert step == 1 and (folder / "adapter_model.safetensors").is_file()
    from league.store import Store

    with Store(config.checkpoint.db) as store:
        row = store.policy("tiny/step-1")
    assert row is not None and row.spec == f"hf:local+{folder.resolve()}"
    # ... evaluated in league tiny/eval/step-1, and shown by the web as the run's first checkpoint
    assert 0 <= m["eval/score_vs_bot"] <= 1 and 0 <= m["eval/score_vs_random"] <= 1
    from fastapi.testclient import TestClient

    from web.app import create_app

    with TestClient(create_app(config.checkpoint.db)) as web:
        board = web.get("/api/leaderboard", params={"league": "tiny/eval/step-1", "system": "bt"}).json()
        assert {r["policy"] for r in board["rows"]} == {"tiny/step-1", "bot", "random"}
        [checkpoint] = web.get("/api/runs/tiny").json()["checkpoints"]
        assert (checkpoint["step"], checkpoint["eval_league"], checkpoint["games"]) == (1, "tiny/eval/step-1", 2)
        assert checkpoint["lo"] <= checkpoint["rating"] <= checkpoint["hi"]
    saved = {k: v.clone() for k, v in trainer.learner.params.items()}
    trainer.close()

    # "killed" here: a fresh trainer without --resume refuses, with --resume continues at step 2
    (config.run_dir / "step-2.partial").mkdir()  # a save interrupted mid-way must be ignored
    with pytest.raises(TrainError, match="--resume"):
        Trainer(config).setup()
    resumed = Trainer(config, resume=True)
    resumed.setup()
    assert resumed.step == 1
    for key, value in resumed.learner.params.items():
        assert torch.equal(value, saved[key])
    assert resumed.learner.optimizer.state_dict()["state"], "optimizer moments were not restored"
    assert resumed.pool.checkpoints == trainer.pool.checkpoints and len(resumed.pool.checkpoints) == 1
    assert resumed.pool.checkpoints[0].startswith(row.spec + ",")
    assert resumed.baselines.values == trainer.baselines.values
    resumed.close()
