"""Advantage maths with hand-computed numbers."""

import math

import pytest

from trainer.advantages import EPS, RoleBaselines, compute_advantages, grpo_advantages, reinforce_advantages, state_shares


def test_grpo_normalises_within_each_group():
    # group a: rewards 1, -1 -> mean 0, population std 1 -> +1/(1+eps), -1/(1+eps)
    # group b: 2, 2, 5 -> mean 3, std sqrt((1+1+4)/3)=sqrt(2)
    adv = grpo_advantages([1, -1, 2, 2, 5], ["a", "a", "b", "b", "b"])
    assert adv[0] == pytest.approx(1 / (1 + EPS))
    assert adv[1] == pytest.approx(-1 / (1 + EPS))
    assert adv[2] == pytest.approx(-1 / (math.sqrt(2) + EPS))
    assert adv[4] == pytest.approx(2 / (math.sqrt(2) + EPS))


def test_dr_grpo_only_centres():
    assert grpo_advantages([1, 0, 2], ["g"] * 3, scale_by_std=False) == pytest.approx([0, -1, 1])


def test_ties_and_singletons_carry_no_signal():
    assert grpo_advantages([1, 1, 0.3], ["g", "g", "h"]) == [0.0, 0.0, 0.0]


def test_zero_sum_seats_get_separate_groups():
    # Self-play, one seed, X (seat 0) wins both games: rewards by (game, seat).
    rewards = [1, -1, 1, -1]
    # Pooled, the group mean is always 0 in a zero-sum game: the "advantage" is just the seat's
    # first-move edge, identical for every reply, so it teaches nothing about the replies.
    assert grpo_advantages(rewards, ["seed"] * 4, scale_by_std=False) == pytest.approx([1, -1, 1, -1])
    # Per seat (how the trainer groups), equal results within a seat give no false signal...
    assert grpo_advantages(rewards, ["seed:0", "seed:1", "seed:0", "seed:1"]) == [0, 0, 0, 0]
    # ...and a real difference within a seat survives.
    adv = grpo_advantages([1, -1, -1, 1], ["seed:0", "seed:1", "seed:0", "seed:1"], scale_by_std=False)
    assert adv == pytest.approx([1, -1, -1, 1])


def test_spiral_reads_the_baseline_before_updating_it():
    b = RoleBaselines(decay=0.5)
    roles = [("ttt", 0), ("ttt", 0), ("ttt", 1)]
    assert b.advantages([1.0, 0.0, -1.0], roles) == [1.0, 0.0, -1.0]  # baselines start at 0
    # then b[ttt#0] = 0.5*(0.5*0 + 0.5*1) + 0.5*0 = 0.25 ; b[ttt#1] = -0.5
    assert b.values == {"ttt#0": pytest.approx(0.25), "ttt#1": pytest.approx(-0.5)}
    assert b.advantages([1.0, -1.0], [("ttt", 0), ("ttt", 1)]) == pytest.approx([0.75, -0.5])
    restored = RoleBaselines.from_state(b.state_dict())
    assert restored.values == b.values and restored.decay == 0.5


def test_reinforce_subtracts_the_role_mean():
    assert reinforce_advantages([1, 3, 10], [("g", 0), ("g", 0), ("g", 1)]) == pytest.approx([-1, 1, 0])


def test_dispatch_rejects_unknown():
    with pytest.raises(ValueError):
        compute_advantages("ppo", [1], ["g"], [("g", 0)], RoleBaselines())


def test_attempt_credit_centres_legality_per_role():
    from trainer.advantages import attempt_credit

    valid = [True, False, False, True, True, False]
    roles = [("ttt", 0), ("ttt", 0), ("ttt", 0), ("ttt", 0), ("ttt", 1), ("ttt", 1)]
    # role 0: v = [0, -1, -1, 0], mean -0.5 -> [0.5, -0.5, -0.5, 0.5]; role 1: v = [0, -1], mean -0.5
    assert attempt_credit(valid, roles, 2.0) == [1.0, -1.0, -1.0, 1.0, 1.0, -1.0]
    assert attempt_credit(valid, roles, 0.0) == [0.0] * 6
    # a role whose attempts were all valid (or all invalid) gets no legality signal
    assert attempt_credit([True, True, False], [("a", 0), ("a", 0), ("a", 1)], 1.0) == [0.0, 0.0, 0.0]


def test_state_baseline_centres_each_decision_on_the_other_visits_to_its_state():
    from trainer.advantages import state_baseline

    advantages = [1.0, -1.0, 0.5, 2.0, 3.0]
    states = ["s", "s", "t", "s", None]
    out = state_baseline(advantages, states)
    assert out[0] == pytest.approx(1.0 - (-1.0 + 2.0) / 2)
    assert out[1] == pytest.approx(-1.0 - (1.0 + 2.0) / 2)
    assert out[3] == pytest.approx(2.0 - (1.0 - 1.0) / 2)
    assert out[2] == 0.5 and out[4] == 3.0  # seen once, or no state: unchanged
    # the same move in every visit to a state carries no information about that state's moves
    assert state_baseline([0.7, 0.7, 0.7], ["s"] * 3) == pytest.approx([0.0, 0.0, 0.0], abs=1e-15)


def test_a_state_baseline_leaves_the_expected_gradient_unchanged():
    """Unbiased: averaged over the draws, the baseline's term sum_i b_i * d log pi(a_i) vanishes,
    because each b_i is built from the other decisions only (independent of a_i). Checked exactly
    on one state with two moves, over every joint draw of three visits."""
    import itertools

    from trainer.advantages import state_baseline

    p = 0.3  # pi(move 1)
    value = {0: 1.0, 1: -0.5}  # each move's return, no noise
    expected_plain = expected_centred = 0.0
    for draws in itertools.product((0, 1), repeat=3):
        prob = 1.0
        for a in draws:
            prob *= p if a == 1 else 1 - p
        returns = [value[a] for a in draws]
        centred = state_baseline(returns, ["s"] * 3)
        score = [(1 - p) if a == 1 else -p for a in draws]  # d log pi(a) / d logit(move 1)
        expected_plain += prob * sum(r * g for r, g in zip(returns, score))
        expected_centred += prob * sum(r * g for r, g in zip(centred, score))
    assert expected_centred == pytest.approx(expected_plain, abs=1e-12)


def test_private_contrast_centres_a_move_across_the_private_cards_of_its_public_state():
    from trainer.advantages import private_contrast

    # public state "p": "bet" from cards K, K, J; "check" from Q only; "q": "bet" from K and J
    advantages = [1.0, 0.5, -0.6, 0.4, 2.0, 1.0, 3.0]
    public = ["p", "p", "p", "p", "q", "q", None]
    moves = ["bet", "bet", "bet", "check", "bet", "bet", "bet"]
    cards = ["K", "K", "J", "Q", "K", "J", "K"]
    out = private_contrast(advantages, public, moves, cards, 1.0)
    assert out[:3] == pytest.approx([1.0 - 0.3, 0.5 - 0.3, -0.6 - 0.3])  # mean of (1.0, 0.5, -0.6) is 0.3
    assert out[4:6] == pytest.approx([0.5, -0.5])
    assert out[3] == 0.4 and out[6] == 3.0  # one private state only, or no public state: unchanged
    # at full strength what the cards share is gone: each (public state, move) sums to zero
    assert sum(out[:3]) == pytest.approx(0.0, abs=1e-15) and sum(out[4:6]) == pytest.approx(0.0, abs=1e-15)
    half = private_contrast(advantages, public, moves, cards, 0.5)
    assert half[:3] == pytest.approx([1.0 - 0.15, 0.5 - 0.15, -0.6 - 0.15])
    assert private_contrast(advantages, public, moves, cards, 0.0) == advantages


def test_one_move_from_one_card_only_keeps_its_signal():
    """Two visits with the same card are one private state: nothing to contrast them with, and
    their own signal is the state baseline's business, not this one's."""
    from trainer.advantages import private_contrast

    assert private_contrast([0.8, 0.2], ["p", "p"], ["bet", "bet"], ["K", "K"], 1.0) == [0.8, 0.2]


def test_an_uncompared_move_loses_its_own_mean_when_asked():
    """With `uncompared` (per-state weighting) a move met at a public state from one private state is
    centred on its own mean: at strength 1 every (public state, move) sums to zero, at 0.5 half goes."""
    from trainer.advantages import private_contrast

    advantages, public, moves, cards = [0.8, 0.2, 0.5, 1.0], ["p", "p", "p", None], ["bet", "bet", "check", "bet"], ["K", "K", "Q", "J"]
    assert private_contrast(advantages, public, moves, cards, 1.0, uncompared=True) == pytest.approx([0.3, -0.3, 0.0, 1.0], abs=1e-15)
    assert private_contrast(advantages, public, moves, cards, 0.5, uncompared=True) == pytest.approx([0.55, -0.05, 0.25, 1.0], abs=1e-15)
    weights = [0.25, 0.75, 1.0, 1.0]
    out = private_contrast(advantages, public, moves, cards, 1.0, weights, uncompared=True)
    assert sum(w * a for w, a in zip(weights[:2], out[:2])) == pytest.approx(0.0, abs=1e-15)
    assert private_contrast(advantages, public, moves, cards, 1.0) == advantages  # without it: nothing to compare, unchanged


def test_state_shares_give_every_state_met_one_unit_of_weight():
    shares = state_shares(["a", "b", "a", "a", "c", "b"])
    assert shares == pytest.approx([1 / 3, 1 / 2, 1 / 3, 1 / 3, 1.0, 1 / 2], abs=1e-15)
    assert sum(shares) == pytest.approx(3.0, abs=1e-12)  # three states met
    assert state_shares([]) == []


def test_a_weighted_private_contrast_centres_what_the_loss_sees():
    """With the loss's per-state shares the contrast's mean is weighted by them: at strength 1 the
    weighted advantages of one move at one public state sum to zero, which the plain mean does not."""
    from trainer.advantages import private_contrast

    advantages, public, moves, cards = [1.0, 0.4, -0.6], ["p", "p", "p"], ["bet"] * 3, ["K", "K", "J"]
    shares = state_shares(cards)  # K met twice (1/2 each), J once (1)
    weighted = private_contrast(advantages, public, moves, cards, 1.0, shares)
    assert sum(w * a for w, a in zip(shares, weighted)) == pytest.approx(0.0, abs=1e-15)
    plain = private_contrast(advantages, public, moves, cards, 1.0)
    assert sum(w * a for w, a in zip(shares, plain)) == pytest.approx(-1.3 / 3, abs=1e-15)
    assert private_contrast(advantages, public, moves, cards, 1.0, [1.0] * 3) == pytest.approx(plain, abs=1e-15)
