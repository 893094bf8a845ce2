"""`arena train` with rollouts on vLLM (`rollout.engine: vllm`): one real step on the shipped model.

The step samples on the test session's one vLLM engine (tests/conftest.py `vllm_engine`) with the
live adapter as a LoRA request, trains it with the transformers learner, and publishes the new
weights into the running engine. Then vLLM must serve the new adapter: a new LoRA name and id,
greedy log-probs of a fixed prompt that match the learner's new adapter, and the next rollout's
requests on the new LoRA only. Skipped where vLLM is not installed."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
import torch

from arena.llm.engines import SamplingParams
from trainer.config import parse_config
from trainer.learner import Sample
from trainer.run import Trainer

pytestmark = pytest.mark.slow

PROMPT = [
    {"role": "system", "content": "You play Tic-Tac-Toe as X."},
    {"role": "user", "content": "Board:\n1|2|3\n4|5|6\n7|8|9\nPick a free cell. Answer like [5]."},
]


def _config(tmp_path: Path):
    return parse_config({
        "name": "tiny-vllm", "output_dir": str(tmp_path / "runs"), "steps": 2, "seed": 3,
        "games": [{"id": "tictactoe"}],
        "rollout": {"engine": "vllm", "groups_per_step": 1, "group_size": 2, "in_flight": 2, "max_new_tokens": 4, "obs": "chat"},
        # SPIRAL's baseline starts at 0, so the first batch has non-zero advantages; a large
        # learning rate so one step moves the log-probs far more than the engines disagree
        "algorithm": {"advantage": "spiral", "epochs": 1, "minibatch_size": 16, "micro_batch_size": 8, "learning_rate": 2e-2},
        "checkpoint": {"every": 100, "register_in_league": False},
        "logging": {"wandb": False},
    })


def _learner_logps(trainer: Trainer, prompt_ids: list[int], completion_ids: list[int], *, base: bool = False) -> torch.Tensor:
    learner = trainer.learner
    with torch.no_grad():
        if base:
            with learner.model.disable_adapter():
                logps, _, _ = learner._forward_logps([Sample(prompt_ids, completion_ids, 0.0)])
        else:
            logps, _, _ = learner._forward_logps([Sample(prompt_ids, completion_ids, 0.0)])
    return logps[0, : len(completion_ids)].cpu()


def test_a_step_on_vllm_rollouts_moves_the_adapter_and_the_next_rollout_samples_it(tmp_path, vllm_engine):
    trainer = Trainer(_config(tmp_path))
    trainer.setup()
    try:
        policy = trainer.learner_policy
        assert policy.engine is vllm_engine and policy.engine_kind == "vllm"
        live = str(trainer.live_dir)
        first = vllm_engine.lora_request(live)  # published at setup, before any rollout
        assert first is not None and first.lora_path.endswith("v0")
        before = {k: v.detach().clone() for k, v in trainer.learner.params.items()}
        played = []
        rollout = trainer._play_rollout

        async def recording(step):
            played.append(await rollout(step))
            return played[-1]

        trainer._play_rollout = recording
        [report] = asyncio.run(trainer.train(stop_after=1))
        del trainer._play_rollout
        m = report.metrics
        assert m["rollout/engine"] == "vllm" and m["rollout/adapter_version"] == 1
        assert m["samples"] > 0 and m["train/optimizer_steps"] == 1 and math.isfinite(m["train/loss"])
        assert any(not torch.equal(before[k], v) for k, v in trainer.learner.params.items()), "the LoRA weights did not move"
        # Every trained token came with vLLM's own log-prob: the mismatch is measured on all of
        # them, and it is small (two float32 implementations summing in different orders; docs/training.md).
        assert m.get("mismatch/tokens", 0) >= m["samples"], m
        assert 0 < m["mismatch/logp_abs_mean"] < 0.1 and m["mismatch/logp_abs_max"] < 2.0, m
        assert 0.5 < m["mismatch/tis_weight_mean"] <= 2.0, m
        # Token in, token out (obs=chat): each turn of a seat was sent as the previous prompt's ids +
        # the exact ids sampled for it + the new turn's, and vLLM's log-prob came with every id.
        [result] = played
        extended = 0
        for _, record in result.records:
            for seat in (0, 1):
                turns = [t.meta for t in record.turns if t.player == seat and "completion_ids" in t.meta]
                assert all(len(t["completion_logprobs"]) == len(t["completion_ids"]) for t in turns)
                for a, b in zip(turns, turns[1:]):
                    extended += b["prompt_ids"][: len(a["prompt_ids"]) + len(a["completion_ids"])] == a["prompt_ids"] + a["completion_ids"]
        assert extended >= policy.chats.stats.incremental >= 1, (extended, policy.chats.stats)

        # The engine now serves the live adapter from the published folder, under a new LoRA.
        second = vllm_engine.lora_request(live)
        assert second.lora_int_id != first.lora_int_id and second.lora_name != first.lora_name
        assert Path(second.lora_path) == (trainer.run_dir / ".vllm-adapters" / "v1").resolve()

        # Greedy log-probs of a fixed prompt under vLLM are the learner's NEW adapter's.
        ids = vllm_engine.template.encode(PROMPT)
        greedy = SamplingParams(temperature=0.0, max_new_tokens=8, logprobs=True)
        generation = asyncio.run(vllm_engine.chat_ids(ids, greedy, live))
        served = torch.tensor(generation.completion_logprobs)
        new = _learner_logps(trainer, ids, generation.completion_ids)
        old = _learner_logps(trainer, ids, generation.completion_ids, base=True)  # the adapter before the step (B = 0)
        to_new, to_old = float((served - new).abs().mean()), float((served - old).abs().mean())
        assert to_new < 0.1 and to_new < to_old / 3, (to_new, to_old)

        # The next rollout's learner requests all name the new LoRA.
        requests = dict(vllm_engine.stats.lora_requests)
        asyncio.run(trainer._play_rollout(2))
        grown = {name: n - requests.get(name, 0) for name, n in vllm_engine.stats.lora_requests.items() if n > requests.get(name, 0)}
        assert set(grown) == {second.lora_name} and grown[second.lora_name] >= 2
    finally:
        trainer.close()
    assert not (trainer.run_dir / ".vllm-adapters").exists()
