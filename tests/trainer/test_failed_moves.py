"""A step where every move of the learner's raised (a broken engine or adapter, not a weak policy)
stops the run with the first error, instead of logging a step of forfeits that trains nothing."""

import asyncio

import pytest

from arena.match import MatchRecord, TurnRecord
from arena.policy import PolicyFailure
from trainer.config import parse_config
from trainer.rewards import Episode
from trainer.run import TrainError, Trainer, stop_if_every_move_failed


def _turn(i: int, player: int, error: str | None) -> TurnRecord:
    raw = "" if error else "[5]"
    return TurnRecord(index=i, player=player, policy="p", turn=i, attempt=0, observation="", legal_moves=None,
                      raw=raw, action=raw or None, valid=error is None, error=error)


def _episode(*errors: str | None) -> Episode:
    record = MatchRecord(match_id="m", game_id="g", num_players=2, seed=0, policies=["a", "b"], specs=["a", "b"],
                         turns=[_turn(i, 0, e) for i, e in enumerate(errors)] + [_turn(len(errors), 1, "theirs")],
                         outcome={"scores": [0.0, 0.0], "ranks": [1, 1]}, status="finished")
    return Episode(record, 0, group="g:seat0")


def test_a_step_whose_every_learner_move_failed_stops_with_the_first_error():
    failed = [_episode("policy failure: local: ValueError: boom", "timeout after 30s"), _episode("policy failure: x")]
    with pytest.raises(TrainError, match=r"^step 7: every move of the learner's failed \(3 of 3\).*the first: policy failure: local: ValueError: boom$"):
        stop_if_every_move_failed(7, failed)


def test_one_stated_move_or_no_moves_at_all_is_not_a_broken_learner():
    stop_if_every_move_failed(1, [_episode("policy failure: x"), _episode(None)])  # one move stated: trainable
    stop_if_every_move_failed(1, [_episode()])  # the learner never moved (the opponent's failure is theirs)
    stop_if_every_move_failed(1, [])


@pytest.mark.slow
def test_a_trainer_whose_policy_raises_stops_at_its_first_step(tmp_path, monkeypatch):
    config = parse_config({
        "name": "broken", "output_dir": str(tmp_path / "runs"), "steps": 3, "seed": 1, "games": [{"id": "tictactoe"}],
        "rollout": {"groups_per_step": 1, "group_size": 2, "in_flight": 2, "max_new_tokens": 4},
        "algorithm": {"epochs": 1, "minibatch_size": 4, "micro_batch_size": 4},
        "checkpoint": {"every": 1, "db": f"sqlite:///{tmp_path / 'arena.db'}"},
        "eval": {"games_per_opponent": 0}, "logging": {"wandb": False},
    })
    trainer = Trainer(config)
    trainer.setup()

    async def broken(request):
        raise PolicyFailure("local:local: ValueError: max() arg is an empty sequence")

    monkeypatch.setattr(trainer.learner_policy, "act", broken)
    with pytest.raises(TrainError, match="^step 1: every move of the learner's failed .* ValueError: max"):
        asyncio.run(trainer.train(stop_after=1))
    assert trainer.step == 0  # nothing logged or saved as a trained step
