"""Training in choice mode: the action is the draw among the legal moves, its behaviour log-prob
is the scoring's probability of that draw, and the learner must recompute exactly that."""

import asyncio
import dataclasses
import math
import random

import pytest
import torch

from arena.llm.engines import open_engine
from arena.match import play_match
from games.registry import make_game
from trainer.config import AlgorithmSettings, LoraSettings, RolloutSettings
from trainer.learner import Learner, Sample, write_initial_adapter
from trainer.rollouts import learner_temperature, training_policy, turn_sample

pytestmark = pytest.mark.slow

DRAW_TEMPERATURE = 2.0  # not 1, so the temperature's place in the probability is checked too


@pytest.fixture(scope="module")
def learner_and_turns(tmp_path_factory):
    rollout = RolloutSettings(mode="choice", obs="state", temperature=DRAW_TEMPERATURE)
    adapter = tmp_path_factory.mktemp("choice") / "live"
    write_initial_adapter("local", LoraSettings(r=4, alpha=8, target_modules=["q_proj", "v_proj"]), adapter, seed=2)
    engine = open_engine("local", "hf")
    settings = AlgorithmSettings(epochs=1, minibatch_size=4, micro_batch_size=4, learning_rate=1e-3)
    learner = Learner(engine, adapter, settings, temperature=learner_temperature(rollout), max_new_tokens=rollout.max_new_tokens)
    torch.manual_seed(0)
    with torch.no_grad():  # a non-zero adapter, so the scoring really runs through it
        for p in learner.params.values():
            p.add_(torch.randn_like(p) * 0.01)
    policy = training_policy("local", str(adapter), rollout)

    async def rollouts():
        return await asyncio.gather(*(play_match(make_game("kuhn_poker", 2, hands=1), [policy, policy], seed) for seed in range(2)))

    turns = [t for r in asyncio.run(rollouts()) for t in r.turns]
    assert turns and all(t.valid and t.meta["parse"] == "choice" for t in turns)
    return learner, turns


def test_learner_reproduces_the_probability_each_move_was_drawn_with(learner_and_turns):
    learner, turns = learner_and_turns
    tokenizer = learner.engine.tokenizer
    samples = [turn_sample(t.meta, 0.0) for t in turns]
    for sample, turn in zip(samples, turns):
        assert sample.is_choice and sample.choice_temperature == DRAW_TEMPERATURE
        # the drawn move's own tokens plus end-of-turn, one of every legal move's
        assert tokenizer.decode(sample.completion_ids, skip_special_tokens=True) == turn.action
        assert sample.completion_ids[-1] in learner.engine._end_ids
        assert len(sample.option_ids) == len(turn.meta["move_probs"]) >= 2
        assert sample.sampler_logps == [pytest.approx(math.log(turn.meta["move_probs"][turn.action]), abs=1e-9)]
    learner.prepare(samples, need_ref=False)
    for sample, turn in zip(samples, turns):
        assert sample.old_logps.shape == (1,)
        assert float(sample.old_logps[0]) == pytest.approx(math.log(turn.meta["move_probs"][turn.action]), abs=1e-4)
        # and each legal move's log-prob as the whole reply, from which that probability comes
        rows = [Sample(sample.prompt_ids, ids, 0.0) for ids in sample.option_ids]
        with torch.no_grad():
            logps, mask, _ = learner._forward_logps(rows)
        torch.testing.assert_close((logps * mask).sum(1).cpu(), torch.tensor(turn.meta["option_logprobs"]), atol=1e-4, rtol=0)


def test_update_raises_the_drawn_moves_choice_probability_and_the_bonus_spreads_it(learner_and_turns):
    learner, turns = learner_and_turns
    target = turn_sample(turns[0].meta, 1.0)

    def draw(sample: Sample) -> tuple[float, float]:
        """The drawn move's choice log-prob and the draw's entropy, under the live weights."""
        with torch.no_grad():
            logp, _, entropy = learner._choice_logps([sample], None, with_entropy=True)
        return float(logp), float(entropy)

    before = draw(target)[0]
    stats = learner.update([target], random.Random(0))
    assert stats["train/optimizer_steps"] == 1
    assert draw(target)[0] > before

    # Advantage 0 and an entropy bonus only: the update moves the choice toward uniform.
    learner.settings.entropy_coef = 1.0
    try:
        still = turn_sample(turns[0].meta, 0.0)
        spread = draw(still)[1]
        stats = learner.update([still], random.Random(0))
        assert stats["train/entropy"] == pytest.approx(spread, abs=1e-4)
        assert draw(still)[1] > spread
    finally:
        learner.settings.entropy_coef = 0.0


def test_samples_asking_the_same_question_share_a_row_with_the_same_scores_and_gradients(learner_and_turns):
    """Two draws at one prompt (another move, the other sign of advantage) run as one row of the
    choice forward; their log-probs and the gradient of their loss are those of separate rows.
    float32 through 30 layers and a 49k-vocab log-softmax, gradients summed over two rows: 1e-4
    relative holds."""
    learner, turns = learner_and_turns
    first = turn_sample(turns[0].meta, 1.0)
    other = (first.chosen + 1) % len(first.option_ids)
    second = Sample(first.prompt_ids, first.option_ids[other], -0.5, option_ids=first.option_ids, chosen=other,
                    choice_temperature=first.choice_temperature)
    third = turn_sample(turns[1].meta, 0.25)
    samples = [first, third, second]

    def logps_and_grads(groups):
        learner.optimizer.zero_grad(set_to_none=True)
        values = []
        for group in groups:
            logps, _, _ = learner._choice_logps(group, None, with_entropy=False)
            (logps.squeeze(1) * torch.tensor([s.advantage for s in group])).sum().backward()
            values.extend(logps.detach().squeeze(1).tolist())
        grads = {k: p.grad.detach().clone() for k, p in learner.params.items() if p.grad is not None}
        learner.optimizer.zero_grad(set_to_none=True)
        return values, grads

    shared_values, shared_grads = logps_and_grads([samples])
    apart_values, apart_grads = logps_and_grads([[s] for s in samples])
    assert shared_values == pytest.approx(apart_values, abs=1e-5)
    assert shared_grads.keys() == apart_grads.keys() and shared_grads
    for key, grad in shared_grads.items():
        scale = float(apart_grads[key].abs().max()) + 1e-12
        torch.testing.assert_close(grad, apart_grads[key], atol=1e-4 * scale, rtol=0)


def _forwards(model) -> list[int]:
    """A counter of the model's forward calls (the base model's, under peft's wrappers)."""
    calls = [0]
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.register_forward_pre_hook(lambda module, args: calls.__setitem__(0, calls[0] + 1))
    return calls


def test_both_layouts_score_and_train_alike_and_the_unshared_one_runs_one_forward(learner_and_turns):
    """share_prefix on: the seat's rules once, the prompts' rest on their cache, the moves on
    theirs (three forwards); off (the default on CUDA): prompts and moves in one forward. Same
    log-probs and gradients: float32 through 30 layers and a 49k-vocab log-softmax, summed in
    another order, 1e-4 relative holds."""
    learner, turns = learner_and_turns
    first = turn_sample(turns[0].meta, 1.0)
    # another question of the same seat: the same rules, a few tokens of the observation changed
    tail = first.prompt_ids[-9:]
    other_prompt = first.prompt_ids[:-9] + [token + 1 for token in tail[:3]] + tail[3:]
    other = dataclasses.replace(first, prompt_ids=other_prompt, advantage=-0.5)
    redraw = (first.chosen + 1) % len(first.option_ids)
    samples = [first, other, dataclasses.replace(first, completion_ids=first.option_ids[redraw], chosen=redraw, advantage=0.25)]
    calls = _forwards(learner.model)

    def logps_and_grads(share: bool):
        learner.settings = learner.settings.model_copy(update={"share_prefix": share})
        learner.optimizer.zero_grad(set_to_none=True)
        before = calls[0]
        logps, _, _ = learner._choice_logps(samples, None, with_entropy=False)
        forwards = calls[0] - before
        (logps.squeeze(1) * torch.tensor([s.advantage for s in samples])).sum().backward()
        grads = {k: p.grad.detach().clone() for k, p in learner.params.items() if p.grad is not None}
        learner.optimizer.zero_grad(set_to_none=True)
        return logps.detach().squeeze(1).tolist(), grads, forwards

    try:
        shared_values, shared_grads, shared_forwards = logps_and_grads(True)
        whole_values, whole_grads, whole_forwards = logps_and_grads(False)
    finally:
        learner.settings = learner.settings.model_copy(update={"share_prefix": "auto"})
    assert (shared_forwards, whole_forwards) == (3, 1)
    assert whole_values == pytest.approx(shared_values, abs=1e-4)
    assert shared_grads.keys() == whole_grads.keys() and shared_grads
    for key, grad in shared_grads.items():
        scale = float(grad.abs().max()) + 1e-12
        torch.testing.assert_close(whole_grads[key], grad, atol=1e-4 * scale, rtol=0)


def test_share_prefix_auto_shares_on_the_cpu_only(learner_and_turns):
    learner, _ = learner_and_turns
    assert learner.settings.share_prefix == "auto" and learner.device.type == "cpu" and learner.share_prefix
    cuda = object.__new__(Learner)  # the rule alone, without a GPU
    cuda.settings, cuda.device = AlgorithmSettings(), torch.device("cuda")
    assert cuda.share_prefix is False
    cuda.settings = AlgorithmSettings(share_prefix=True)
    assert cuda.share_prefix is True


def test_a_choice_sample_must_name_the_drawn_option():
    with pytest.raises(ValueError, match="option_ids\\[chosen\\]"):
        Sample([1, 2], [5, 0], 1.0, option_ids=[[4, 0], [5, 0]], chosen=0)
    sample = Sample([1, 2], [5, 0], 1.0, option_ids=[[4, 0], [5, 0]], chosen=1)
    assert sample.is_choice and sample.action_length == 1
    assert Sample([1, 2], [5, 0], 1.0).action_length == 2


def test_micro_batches_keep_choice_and_text_samples_and_the_seats_apart():
    from trainer.learner import micro_batches

    seat = {0: list(range(100, 140)), 1: list(range(200, 240))}  # two 40-token system prompts
    text = [Sample(seat[i % 2] + [i], [5], 0.0) for i in range(6)]
    choice = [Sample(seat[i % 2] + [i], [5], 0.0, option_ids=[[5], [6]]) for i in range(6)]
    chunks = micro_batches([x for pair in zip(text, choice) for x in pair], 2)
    assert sorted(len(c) for c in chunks) == [1, 1, 1, 1, 2, 2, 2, 2]  # 3 per seat and kind, cut at 2
    for chunk in chunks:
        assert len({s.is_choice for s in chunk}) == 1 and len({s.prompt_ids[0] for s in chunk}) == 1
    # without prefix sharing every row runs its whole prompt: the seats may share a chunk
    whole = micro_batches([x for pair in zip(text, choice) for x in pair], 4, by_prefix=False)
    assert sorted(len(c) for c in whole) == [2, 2, 4, 4]
    assert all(len({s.is_choice for s in chunk}) == 1 for chunk in whole)


def test_a_choice_run_trains_draws_and_plays_its_checkpoints_as_trained(tmp_path):
    """`arena train` in choice mode at temperature 5, end to end: the samples are draws with every
    legal move's ids, the logged entropy is the draw's (at most ln 2 between two moves), and the
    step-1 checkpoint is registered and then drawn as a lagged opponent at the temperature it was
    trained at (a spec over the token-sampling cap of 2 used to be refused there)."""
    from trainer.config import parse_config
    from trainer.run import Trainer

    config = parse_config({
        "name": "kuhn-choice", "output_dir": str(tmp_path / "runs"), "steps": 2, "seed": 3,
        "games": [{"id": "kuhn_poker", "options": {"hands": 1}}],
        "opponents": [{"kind": "lagged", "sampling": "latest"}],
        "rollout": {"mode": "choice", "engine": "hf", "obs": "state", "temperature": 5.0, "groups_per_step": 2,
                    "group_size": 2, "in_flight": 4, "max_new_tokens": 4},
        "rewards": {"terms": [{"kind": "outcome", "mode": "score"}]},
        "algorithm": {"advantage": "reinforce", "loss_norm": "sequence", "epochs": 1, "minibatch_size": 16,
                      "micro_batch_size": 8, "learning_rate": 1e-3, "kl_coef": 0.1, "entropy_coef": 0.05},
        "checkpoint": {"every": 1, "db": f"sqlite:///{tmp_path / 'arena.db'}"},
        "logging": {"wandb": False},
    })
    trainer = Trainer(config)
    trainer.setup()
    seen: list[list[Sample]] = []
    update = trainer.learner.update
    trainer.learner.update = lambda samples, rng: seen.append(list(samples)) or update(samples, rng)
    try:
        first = asyncio.run(trainer.train_step())  # no checkpoint yet: self-play
        assert trainer.pool.checkpoints[0].endswith(",obs=state,mode=choice,temperature=5,max_new_tokens=4")
        second = asyncio.run(trainer.train_step())  # against step 1, loaded from that spec
    finally:
        trainer.close()
    assert seen and all(s.is_choice and s.choice_temperature == 5.0 and len(s.option_ids) == 2 for s in seen[0])
    for report in (first, second):
        assert 0 < report.metrics["train/entropy"] <= math.log(2) + 1e-6
    assert "games/win_vs_opponents" not in first.metrics  # step 1: only self-play was possible
    assert "games/win_vs_opponents" in second.metrics and second.metrics["samples"] > 0  # step 2: the checkpoint played


def test_a_recorded_turn_names_its_public_state_the_same_whatever_the_card(learner_and_turns):
    """trainer.advantages.private_contrast groups turns by meta["public_state"]: equal exactly when
    the observations are equal once the card is hidden (a regex here, not the game's secrets)."""
    import re

    _, turns = learner_and_turns
    hidden = [(t.player, re.sub(r"Your card: [JQK]", "", t.observation), tuple(t.legal_moves)) for t in turns]
    public = [t.meta["public_state"] for t in turns]
    assert all(re.fullmatch(r"[0-9a-f]{32}", p) for p in public)
    for i in range(len(turns)):
        for j in range(len(turns)):
            assert (public[i] == public[j]) == (hidden[i] == hidden[j])
    # the first decision of a hand looks the same with any card: the two matches' openings share one
    openings = [t for t in turns if t.turn == 0]
    assert len(openings) == 2 and openings[0].meta["public_state"] == openings[1].meta["public_state"]
