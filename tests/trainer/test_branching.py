"""Branched groups (rollout.branch, trainer/branching.py): a group replays a position of the last
step's games, then plays on; the replayed moves are not the seat's to be scored or trained."""

import asyncio
import random
from dataclasses import replace

from arena.match import play_match
from arena.policy import MoveRequest, Policy, PolicyReply
from arena.scripted import RandomPolicy
from games.registry import make_game
from trainer.branching import DIVERGED, REPLAYED, ReplayedMove, branch_point, diverged_games
from trainer.config import GameSettings, OpponentSettings, RolloutSettings
from trainer.rewards import Episode, invalid_penalty
from trainer.rollouts import LEARNER, GamePlan, OpponentPool, plan_games, play_games

TICTACTOE = GameSettings(id="tictactoe")


def _games(n: int) -> list:
    policy = RandomPolicy()

    async def play():
        return await asyncio.gather(*(play_match(make_game("tictactoe", 2), [policy, policy], seed, match_id=f"m{seed}") for seed in range(n)))

    return asyncio.run(play())


class GameRandomPolicy(Policy):
    """A uniform mover with its own draws in every game, as the learner's sampling seeds depend on
    the match id (RandomPolicy's moves depend on the seed and the position only)."""

    async def act(self, request: MoveRequest) -> PolicyReply:
        move = random.Random(f"{request.match_id}:{request.observation.turn}").choice(request.legal_moves)
        return PolicyReply(move, raw=move)


def _play(plans: list[GamePlan]) -> list:
    settings = RolloutSettings(in_flight=4)
    result = asyncio.run(play_games(plans, GameRandomPolicy(), lambda spec: RandomPolicy(), settings))
    return [record for _, record in result.records]


def _accepted(record) -> list:
    return [t for t in record.turns if t.valid]


def test_a_branch_point_is_a_strict_prefix_of_a_finished_games_accepted_moves():
    record = _games(1)[0]
    moves = _accepted(record)
    cuts = {len(branch_point(record, random.Random(i)).prefix) for i in range(200)}
    assert cuts == set(range(1, len(moves)))  # never the reset, never the whole game
    point = branch_point(record, random.Random(0))
    assert point.seed == record.seed
    assert [(m.player, m.action, m.observation) for m in point.prefix] == [(t.player, t.action, t.observation) for t in moves[: len(point.prefix)]]
    assert branch_point(replace(record, status="aborted"), random.Random(0)) is None


def test_a_branched_group_replays_the_position_then_its_games_play_on_apart():
    source = _games(1)[0]
    point = branch_point(source, random.Random(3))
    cut = len(point.prefix)
    assert len(_accepted(source)) - cut >= 2  # the group below has moves of its own to differ in
    plans = [GamePlan("g", TICTACTOE, point.seed, [LEARNER, LEARNER], "self", point) for _ in range(6)]
    records = _play(plans)
    assert len(records) == 6
    for record in records:
        assert [t.meta.get(REPLAYED, False) for t in record.turns[:cut]] == [True] * cut
        assert not any(t.meta.get(REPLAYED) for t in record.turns[cut:])
        assert [t.action for t in record.turns[:cut]] == [m.action for m in point.prefix]
        # the first move played on is asked in the position the source game was in after `cut` moves
        assert record.turns[cut].observation == _accepted(source)[cut].observation
    assert len({tuple(t.action for t in r.turns[cut:]) for r in records}) > 1  # fresh draws, not copies
    assert diverged_games(records) == 0

    record = records[0]
    for seat in (0, 1):
        own = Episode(record, seat, group="g").turns()
        assert own == [t for t in record.turns[cut:] if t.player == seat]


def test_replayed_moves_are_not_scored_as_the_seats_own():
    source = _games(1)[0]
    point = branch_point(source, random.Random(5))
    record = _play([GamePlan("g", TICTACTOE, point.seed, [LEARNER, LEARNER], "self", point)])[0]
    spoiled = replace(record, turns=[replace(t, valid=False) if t.meta.get(REPLAYED) else t for t in record.turns])
    for seat in (0, 1):
        assert invalid_penalty(spoiled, seat) == invalid_penalty(record, seat) == 0.0


def test_a_replay_that_no_longer_matches_the_game_plays_on_and_says_so():
    source = _games(1)[0]
    point = branch_point(source, random.Random(1))
    first = point.prefix[0]
    wrong = replace(point, prefix=(ReplayedMove(first.player, "a board this game never shows", first.action, first.raw), *point.prefix[1:]))
    record = _play([GamePlan("g", TICTACTOE, wrong.seed, [LEARNER, LEARNER], "self", wrong)])[0]
    assert not record.turns[0].meta.get(REPLAYED)
    assert record.turns[0].meta.get(DIVERGED) is True
    assert record.status == "finished"
    assert diverged_games([record]) == 1


def test_plan_games_branches_that_share_of_groups_from_the_last_steps_games():
    previous = _games(8)
    pool = OpponentPool([OpponentSettings(kind="self")])
    every = RolloutSettings(groups_per_step=50, group_size=3, branch=1.0)
    plans = plan_games([TICTACTOE], pool, every, random.Random(0), step=2, previous=previous)
    seeds = {r.seed for r in previous}
    assert all(p.branch is not None and p.seed == p.branch.seed and p.seed in seeds for p in plans)
    for g in range(50):
        group = plans[3 * g: 3 * g + 3]
        assert len({p.group for p in group}) == 1 and len({id(p.branch) for p in group}) == 1
        assert group[0].group.endswith(f"@{len(group[0].branch.prefix)}")

    half = every.model_copy(update={"branch": 0.5})
    branched = sum(p.branch is not None for p in plan_games([TICTACTOE], pool, half, random.Random(1), 2, previous)) / 150
    assert 0.3 < branched < 0.7  # 50 groups at chance 1/2: 0.5 +- 0.21 is 3 standard deviations

    # no previous games (the first step, or a resumed run's): every group resets
    assert all(p.branch is None for p in plan_games([TICTACTOE], pool, every, random.Random(0), 1, []))


def test_without_branching_the_plans_are_what_they_were():
    previous = _games(4)
    pool = OpponentPool([OpponentSettings(kind="self")])
    settings = RolloutSettings(groups_per_step=6, group_size=2)
    plain = plan_games([TICTACTOE], pool, settings, random.Random(7), step=3)
    assert plan_games([TICTACTOE], pool, settings, random.Random(7), 3, previous) == plain  # no extra draws from the run's rng
    assert all(p.branch is None for p in plain)


def test_a_training_step_plays_branched_groups_and_trains_only_the_moves_played_on(tmp_path):
    """`arena train` with rollout.branch 1: step 1 resets (nothing to branch from), step 2's groups
    all start from positions of step 1's games, and what the learner trains on in step 2 is exactly
    the turns played after the replayed ones."""
    from trainer.config import parse_config
    from trainer.run import Trainer

    config = parse_config({
        "name": "kuhn-branch", "output_dir": str(tmp_path / "runs"), "steps": 2, "seed": 1,
        "games": [{"id": "kuhn_poker", "options": {"hands": 1}}],
        "rollout": {"mode": "choice", "engine": "hf", "obs": "state", "temperature": 3.0, "groups_per_step": 2,
                    "group_size": 2, "in_flight": 4, "max_new_tokens": 4, "branch": 1.0},
        "rewards": {"terms": [{"kind": "outcome", "mode": "score"}]},
        "algorithm": {"advantage": "reinforce", "loss_norm": "sequence", "epochs": 1, "minibatch_size": 16,
                      "micro_batch_size": 8, "learning_rate": 1e-3},
        "checkpoint": {"every": 100, "register_in_league": False},
        "logging": {"wandb": False},
    })
    games: list = []
    trainer = Trainer(config, on_event=lambda kind, payload: games.append(payload) if kind == "game_done" else None)
    trainer.setup()
    trained: list = []
    update = trainer.learner.update
    trainer.learner.update = lambda samples, rng: trained.append(list(samples)) or update(samples, rng)
    try:
        first = asyncio.run(trainer.train_step())
        step_one = list(games)
        games.clear()
        second = asyncio.run(trainer.train_step())
    finally:
        trainer.close()
    assert first.metrics["rollout/branched_games"] == 0
    assert second.metrics["rollout/branched_games"] == 4 and second.metrics["rollout/replay_diverged"] == 0
    starts = {(r.seed, tuple(t.action for t in _accepted(r))) for r in step_one}
    played_on = []
    for record in games:
        replayed = [t for t in record.turns if t.meta.get(REPLAYED)]
        assert replayed and len(replayed) < len(_accepted(record))
        prefix = tuple(t.action for t in replayed)
        assert any(seed == record.seed and moves[: len(prefix)] == prefix for seed, moves in starts)
        played_on += [t for t in record.turns if not t.meta.get(REPLAYED)]
    assert sorted(tuple(s.prompt_ids) + tuple(s.completion_ids) for s in trained[1]) == sorted(
        tuple(t.meta["prompt_ids"]) + tuple(t.meta["completion_ids"]) for t in played_on)
