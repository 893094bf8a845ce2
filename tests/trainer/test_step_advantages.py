"""How a step's turns become the learner's samples (Trainer._samples): the state baseline and the
private contrast are applied to the advantages the samples carry, in that order, from what each
turn recorded (its ids, its public state); per-state weighting sets their weights."""

from __future__ import annotations

import pytest

from arena.match import MatchRecord, TurnRecord
from trainer.advantages import private_contrast, state_baseline, state_shares
from trainer.config import parse_config
from trainer.learner import decision_state
from trainer.rewards import Episode
from trainer.run import Trainer

BET, CHECK = [7, 2], [8, 2]
PROMPT = {"K": [1, 5, 11], "J": [1, 5, 12], "dropped": []}  # the same question but for the card


def _trainer(tmp_path, **algorithm) -> Trainer:
    config = {
        "name": "adv", "output_dir": str(tmp_path), "base": "local", "steps": 1,
        "games": [{"id": "kuhn_poker", "options": {"hands": 1}}],
        "rollout": {"mode": "choice", "obs": "state", "groups_per_step": 1, "group_size": 2},
        "algorithm": algorithm, "logging": {"wandb": False},
    }
    return Trainer(parse_config(config, "test"))


def _turn(card: str, move: list[int], public: str | None) -> TurnRecord:
    meta = {"prompt_ids": PROMPT[card], "completion_ids": move, "option_ids": [BET, CHECK], "chosen": 0 if move == BET else 1,
            "option_logprobs": [-0.5, -1.0], "choice_temperature": 5.0, "engine": "hf"}
    if card == "dropped":  # a turn recorded without ids (over the prompt cap, say): no sample
        meta = {}
    elif public is not None:
        meta["public_state"] = public
    return TurnRecord(index=0, player=0, policy="live", turn=0, attempt=0, observation=f"Your card: {card}", legal_moves=["bet", "check"],
                      raw="bet" if move == BET else "check", action="bet" if move == BET else "check", valid=True, meta=meta)


def _episodes(plays: list[tuple[str, list[int], str | None]]) -> list[Episode]:
    return [Episode(MatchRecord(f"m{i}", "kuhn_poker", 2, 0, ["live", "live"], ["s", "s"], turns=[_turn(*play)], status="finished"), 0, "g")
            for i, play in enumerate(plays)]


PLAYS = [("K", BET, "p"), ("K", BET, "p"), ("dropped", BET, "p"), ("J", BET, "p"), ("J", CHECK, "p"), ("K", CHECK, None)]
ADVANTAGES = [1.0, 0.2, 5.0, -0.9, 0.4, 0.7]
KEPT = [i for i, play in enumerate(PLAYS) if play[0] != "dropped"]


@pytest.mark.parametrize("algorithm", [{}, {"state_baseline": True}, {"private_contrast": 0.5},
                                       {"state_baseline": True, "private_contrast": 1.0}])
def test_the_samples_carry_the_advantages_after_the_baseline_then_the_contrast(tmp_path, algorithm):
    samples, dropped = _trainer(tmp_path, **algorithm)._samples(_episodes(PLAYS), ADVANTAGES)
    assert dropped == 1 and len(samples) == 5
    expected = [ADVANTAGES[i] for i in KEPT]
    states = [decision_state(s) for s in samples]
    if algorithm.get("state_baseline"):
        expected = state_baseline(expected, states)
    if algorithm.get("private_contrast"):
        public = [None if PLAYS[i][2] is None else ("kuhn_poker", 0, PLAYS[i][2]) for i in KEPT]
        moves = ["bet" if PLAYS[i][1] == BET else "check" for i in KEPT]
        expected = private_contrast(expected, public, moves, states, algorithm["private_contrast"])
    assert [s.advantage for s in samples] == pytest.approx(expected, abs=1e-15)
    if algorithm == {"state_baseline": True, "private_contrast": 1.0}:
        # "bet" at public state p, from K and J: nothing left that both cards share
        assert sum(s.advantage for s in samples[:3]) == pytest.approx(0.0, abs=1e-15)
        # "check" from J only, and a turn without a public state: as the state baseline left them
        assert [s.advantage for s in samples[3:]] == pytest.approx(state_baseline([ADVANTAGES[i] for i in KEPT], states)[3:], abs=1e-15)
    if not algorithm:
        assert [s.advantage for s in samples] == [ADVANTAGES[i] for i in KEPT]


def test_the_seats_are_never_contrasted_with_each_other(tmp_path):
    """Seat 0's and seat 1's turns at one public state are different decisions: the key holds the seat."""
    episodes = _episodes([("K", BET, "p"), ("J", BET, "p")])
    episodes[1].seat = 1
    for turn in episodes[1].record.turns:
        turn.player = 1
    samples, _ = _trainer(tmp_path, private_contrast=1.0)._samples(episodes, [1.0, -0.5])
    assert [s.advantage for s in samples] == [1.0, -0.5]


def test_the_private_contrast_is_a_share_between_0_and_1(tmp_path):
    with pytest.raises(Exception, match="private_contrast"):
        _trainer(tmp_path, private_contrast=1.5)


def test_per_state_weighting_gives_each_state_met_one_unit_shared_by_its_turns(tmp_path):
    samples, _ = _trainer(tmp_path, state_weighting="per_state", state_baseline=True)._samples(_episodes(PLAYS), ADVANTAGES)
    # K was met three times (bet, bet, check), J twice (bet, check): the same question, other moves
    assert [s.weight for s in samples] == pytest.approx([1 / 3, 1 / 3, 1 / 2, 1 / 2, 1 / 3], abs=1e-15)
    assert [s.weight for s in samples] == state_shares([decision_state(s) for s in samples])
    # the weights change what the step averages, never the advantages
    plain, _ = _trainer(tmp_path, state_baseline=True)._samples(_episodes(PLAYS), ADVANTAGES)
    assert [s.advantage for s in samples] == [s.advantage for s in plain]
    assert all(s.weight == 1.0 for s in plain)


def test_per_state_weighting_and_the_private_contrast_centre_the_weighted_advantages(tmp_path):
    samples, _ = _trainer(tmp_path, state_weighting="per_state", private_contrast=1.0)._samples(_episodes(PLAYS), ADVANTAGES)
    # "bet" at public state p from K (twice, 1/3 each) and J (1/2): nothing left that both cards share, as the loss weighs them
    assert sum(s.weight * s.advantage for s in samples[:3]) == pytest.approx(0.0, abs=1e-15)
    assert sum(s.advantage for s in samples[:3]) != pytest.approx(0.0, abs=1e-3)
    # "check" at p from J only loses its own mean too (weighed alike it would carry what the cards
    # share alone); the turn without a public state keeps its advantage
    assert samples[3].advantage == pytest.approx(0.0, abs=1e-15) and samples[4].advantage == ADVANTAGES[KEPT[4]]
    # by visits the same uncompared turn keeps its signal, as the contrast always did
    by_visits, _ = _trainer(tmp_path, private_contrast=1.0)._samples(_episodes(PLAYS), ADVANTAGES)
    assert by_visits[3].advantage == ADVANTAGES[KEPT[3]]


def test_the_state_weighting_is_one_of_two_names(tmp_path):
    with pytest.raises(Exception, match="state_weighting"):
        _trainer(tmp_path, state_weighting="per_card")


def test_with_the_contrast_a_public_states_samples_share_one_optimizer_step(tmp_path):
    """The contrast cancels what the cards share only over the rows one optimizer step sees: its
    samples carry their public state as their minibatch group (trainer.learner.minibatch_indices)."""
    samples, _ = _trainer(tmp_path, private_contrast=1.0)._samples(_episodes(PLAYS), ADVANTAGES)
    groups = [s.minibatch_group for s in samples]
    assert groups[0] is not None and groups[:4] == [groups[0]] * 4  # K and J at public state "p"
    assert "p" in groups[0] and groups[4] is None  # the turn without a public state goes anywhere
    without, _ = _trainer(tmp_path / "off")._samples(_episodes(PLAYS), ADVANTAGES)
    assert [s.minibatch_group for s in without] == [None] * 5  # without the contrast, rows mix freely
