"""`arena train` from the command line, as a user runs it: the CPU example config (shrunk to two
tiny steps), killed with SIGKILL once its first checkpoint exists, then resumed with --resume. The
run must end with both checkpoints, one metrics line per step, both registered in the league store
and evaluated there (the interrupted evaluation finished, never duplicated), and the web's run page
must show them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ARENA = str(Path(sys.executable).parent / "arena")
pytestmark = pytest.mark.slow


def _tiny_example(tmp_path: Path) -> Path:
    config = yaml.safe_load((ROOT / "examples" / "train-tictactoe-cpu.yaml").read_text())
    config.update(steps=2, output_dir=str(tmp_path / "runs"))
    config["rollout"].update(groups_per_step=1, group_size=2, in_flight=2, max_new_tokens=4)
    config["algorithm"].update(minibatch_size=8, micro_batch_size=8)
    config["checkpoint"].update(every=1, db=f"sqlite:///{tmp_path / 'arena.db'}")
    config["eval"].update(games_per_opponent=1, opponents=["bot", "random"])
    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_example_trains_is_killed_resumes_and_shows_on_the_web(tmp_path):
    config = _tiny_example(tmp_path)
    run_dir = tmp_path / "runs" / "ttt-cpu"
    env = {**os.environ, "WANDB_MODE": "disabled"}
    first = subprocess.Popen([ARENA, "train", str(config), "--no-wandb"], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 400
    while not (run_dir / "step-1" / "trainer_state.pt").is_file():
        assert first.poll() is None, f"training ended early: {first.stderr.read()[-2000:]}"
        assert time.monotonic() < deadline, "no checkpoint within 400 s"
        time.sleep(0.2)
    first.send_signal(signal.SIGKILL)  # typically during the evaluation of step-1
    first.wait()

    again = subprocess.run([ARENA, "train", str(config), "--no-wandb"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "--resume" in again.stderr  # refuses to mix two runs
    resumed = subprocess.run([ARENA, "train", str(config), "--no-wandb", "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resumed from" in resumed.stderr

    assert sorted(p.name for p in run_dir.iterdir() if p.name.startswith("step-")) == ["step-1", "step-2"]
    from trainer.metrics import read_metrics

    steps = [row["step"] for row in read_metrics(run_dir / "metrics.jsonl")]
    assert steps == [1, 2], steps  # one line per step, none twice

    from league.store import Store

    with Store(f"sqlite:///{tmp_path / 'arena.db'}") as store:
        for step in (1, 2):
            policy = store.policy(f"ttt-cpu/step-{step}")
            assert policy is not None and policy.spec.endswith(",obs=state") and policy.meta["step"] == step
            league_id = store.league_id(f"ttt-cpu/eval/step-{step}")
            # round robin of the checkpoint, bot and random, one match per pair: exactly three
            assert store.status_counts(league_id).get("finished", 0) + store.status_counts(league_id).get("aborted", 0) == 3
            assert store.count(league_id) == 3

    from fastapi.testclient import TestClient

    from web.app import create_app

    with TestClient(create_app(f"sqlite:///{tmp_path / 'arena.db'}")) as web:
        run = web.get("/api/runs/ttt-cpu").json()
        assert [(c["step"], c["eval_league"], c["games"]) for c in run["checkpoints"]] == [
            (1, "ttt-cpu/eval/step-1", 2), (2, "ttt-cpu/eval/step-2", 2)]
        assert {o["policy"] for o in run["opponents"]} == {"bot", "random"}
        assert web.get("/runs/ttt-cpu").status_code == 200
