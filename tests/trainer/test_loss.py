"""The clipped policy-gradient loss against numbers worked out by hand."""

import math

import pytest
import torch

from trainer.loss import normaliser, policy_loss


def _loss(new, old, adv, mask, **kw):
    args = dict(epsilon=0.2, epsilon_high=None, norm="token", denominator=float(torch.tensor(mask).sum()))
    args.update(kw)
    return policy_loss(torch.tensor(new, dtype=torch.float32, requires_grad=True), torch.tensor(old), torch.tensor(adv), torch.tensor(mask, dtype=torch.float32), **args)


def test_unclipped_ratio_one_is_minus_mean_advantage():
    loss, stats = _loss([[0.0, 0.0]], [[0.0, 0.0]], [2.0], [[1, 1]])
    assert loss.item() == pytest.approx(-2.0)
    assert stats.clip_fraction == 0 and stats.approx_kl_old == pytest.approx(0)


def test_clipping_by_hand():
    # token 1: ratio e^0.5=1.6487, A=+1 -> clipped to 1.2 -> -1.2 ; token 2: ratio e^-0.5=0.6065,
    # A=+1 -> min(0.6065, 0.8)=0.6065 -> -0.6065 (no clip: ratio below the range with A>0 keeps grad)
    loss, stats = _loss([[0.5, -0.5]], [[0.0, 0.0]], [1.0], [[1, 1]])
    assert loss.item() == pytest.approx(-(1.2 + math.exp(-0.5)) / 2, abs=1e-6)
    assert stats.clip_fraction == pytest.approx(0.5)


def test_negative_advantage_clips_low_side_and_clip_higher():
    # A=-1, ratio 0.6065 -> max(0.6065*1, 0.8*1) per-token loss = 0.8 (clipped)
    loss, stats = _loss([[-0.5]], [[0.0]], [-1.0], [[1]])
    assert loss.item() == pytest.approx(0.8)
    assert stats.clip_fraction == 1.0
    # DAPO clip-higher: epsilon_high=0.7 lets ratio 1.6487 through for A>0
    loss, _ = _loss([[0.5]], [[0.0]], [1.0], [[1]], epsilon_high=0.7)
    assert loss.item() == pytest.approx(-math.exp(0.5), abs=1e-6)


def test_gradient_is_zero_where_clipped():
    new = torch.tensor([[0.5, 0.1]], requires_grad=True)
    loss, _ = policy_loss(new, torch.zeros(1, 2), torch.tensor([1.0]), torch.ones(1, 2), epsilon=0.2, epsilon_high=None, norm="token", denominator=2.0)
    loss.backward()
    assert new.grad[0, 0].item() == 0.0
    assert new.grad[0, 1].item() == pytest.approx(-math.exp(0.1) / 2, abs=1e-6)  # d(-r A/2)/dlogp = -r/2


def test_masked_tokens_do_not_count():
    loss, stats = _loss([[0.0, 9.0]], [[0.0, 0.0]], [1.0], [[1, 0]])
    assert loss.item() == pytest.approx(-1.0) and stats.tokens == 1


def test_normalisers():
    mask = torch.tensor([[1, 1, 1], [1, 0, 0]], dtype=torch.float32)
    assert normaliser(mask, "token", 10) == 4
    assert normaliser(mask, "sequence", 10) == 2
    assert normaliser(mask, "dr_grpo", 10) == 20
    # sequence: per-sample means (-1 and -1) summed / 2 samples = -1; token: -4/4 = -1; dr: -4/20
    new, old, adv = torch.zeros(2, 3, requires_grad=True), torch.zeros(2, 3), torch.tensor([1.0, 1.0])
    common = dict(epsilon=0.2, epsilon_high=None)
    assert policy_loss(new, old, adv, mask, norm="sequence", denominator=2, **common)[0].item() == pytest.approx(-1)
    assert policy_loss(new, old, adv, mask, norm="dr_grpo", denominator=20, **common)[0].item() == pytest.approx(-0.2)
    with pytest.raises(ValueError):
        normaliser(mask, "mean", 1)


def test_a_minibatch_of_fractional_weights_is_divided_by_what_it_weighs():
    """Per-state shares (state_weighting: per_state) can leave a minibatch weighing less than one
    token: its loss is still the weighted mean, not shrunk by a floor of 1."""
    mask = torch.tensor([[1.0], [1.0]])
    assert normaliser(mask, "token", 1, torch.tensor([0.25, 0.5])) == pytest.approx(0.75)
    assert normaliser(torch.zeros(1, 2), "token", 2) == 1.0  # no reply tokens: nothing to divide


def test_k3_kl_penalty():
    # q = ref - new = -0.1 -> k3 = e^-0.1 + 0.1 - 1 = 0.0048374; coef 0.5 adds 0.0024187 to -A
    loss, stats = _loss([[0.0]], [[0.0]], [0.0], [[1]], ref_logps=torch.tensor([[-0.1]]), kl_coef=0.5)
    k3 = math.exp(-0.1) + 0.1 - 1
    assert stats.kl_ref == pytest.approx(k3, rel=1e-5)
    assert loss.item() == pytest.approx(0.5 * k3, rel=1e-5)


def test_statistics_count_a_weighted_sample_as_the_turns_it_stands_for():
    # Two one-token samples, the first of weight 3: KL to the reference k3(-0.1) and k3(-0.4), and
    # the first's ratio clipped (A=+1, ratio e^0.5). The means count the first sample three times,
    # as the three identical turns it replaces would (trainer.learner.merge_duplicates).
    ref = torch.tensor([[-0.1], [-0.4]])
    _, stats = _loss([[0.0], [0.0]], [[-0.5], [0.0]], [1.0, 1.0], [[1], [1]], ref_logps=ref, kl_coef=0.0,
                     sample_weights=torch.tensor([3.0, 1.0]))
    k3 = [math.exp(q) - q - 1 for q in (-0.1, -0.4)]
    assert stats.kl_ref == pytest.approx((3 * k3[0] + k3[1]) / 4, rel=1e-5)
    assert stats.clip_fraction == pytest.approx(3 / 4)
    assert (stats.tokens, stats.weight) == (2, 4.0)


def test_truncated_importance_weights_scale_the_policy_gradient_term_only():
    # ratio 1, A=+2: per-token -2; weights 0.5 and 2 -> (-1 + -4) / 2; the KL term is not weighted
    loss, _ = _loss([[0.0, 0.0]], [[0.0, 0.0]], [2.0], [[1, 1]], is_weights=torch.tensor([[0.5, 2.0]]))
    assert loss.item() == pytest.approx(-2.5)
    ref = torch.tensor([[0.1, 0.1]])
    with_kl, stats = _loss([[0.0, 0.0]], [[0.0, 0.0]], [0.0], [[1, 1]], ref_logps=ref, kl_coef=1.0, is_weights=torch.tensor([[0.5, 0.5]]))
    assert with_kl.item() == pytest.approx(stats.kl_ref) and stats.kl_ref > 0


def test_sampler_mismatch_and_truncated_weights_by_hand():
    from trainer.config import AlgorithmSettings
    from trainer.learner import Sample, sampler_mismatch

    # learner -1.0, -2.0 vs sampler -1.5, -0.5: |diff| 0.5, 1.5; weights e^0.5 = 1.6487, e^-1.5 = 0.2231
    vllm = Sample([1, 2], [3, 4], 1.0, old_logps=torch.tensor([-1.0, -2.0]), sampler_logps=[-1.5, -0.5])
    capped = Sample([1], [5], 1.0, old_logps=torch.tensor([0.0]), sampler_logps=[-3.0])  # e^3 -> cap 2
    hf = Sample([1], [6], 1.0, old_logps=torch.tensor([-0.1]))  # no sampler log-probs: not counted
    stats = sampler_mismatch([vllm, capped, hf], AlgorithmSettings(tis_cap=2.0))
    assert stats["mismatch/tokens"] == 3
    assert stats["mismatch/logp_abs_mean"] == pytest.approx((0.5 + 1.5 + 3.0) / 3)
    assert stats["mismatch/logp_abs_max"] == pytest.approx(3.0)
    assert stats["mismatch/tis_truncated_fraction"] == pytest.approx(1 / 3)
    torch.testing.assert_close(vllm.is_weights, torch.tensor([math.exp(0.5), math.exp(-1.5)]))
    assert capped.is_weights.tolist() == [2.0] and hf.is_weights is None
    sampler_mismatch([vllm], AlgorithmSettings(sampler_correction="none"))  # measured, not applied
    assert vllm.is_weights is None


def test_entropy_bonus_subtracts_beta_times_the_entropy():
    # ratio 1, A = 0: only the bonus; sequence norm averages (0.5 + 0.3) / 2 per sample, 2 samples
    entropy = torch.tensor([[0.5, 0.3], [0.7, 0.0]], requires_grad=True)
    loss, _ = _loss([[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]], [0.0, 0.0], [[1, 1], [1, 0]],
                    norm="sequence", denominator=2, entropy=entropy, entropy_coef=0.1)
    assert loss.item() == pytest.approx(-0.1 * (0.4 + 0.7) / 2)
    loss.backward()
    assert entropy.grad[1, 1] == 0 and entropy.grad[0, 0] < 0  # masked positions get none
    off, _ = _loss([[0.0]], [[0.0]], [0.0], [[1]], entropy=torch.tensor([[0.5]]), entropy_coef=0.0)
    assert off.item() == 0


@pytest.mark.parametrize("norm", ["token", "sequence", "dr_grpo"])
def test_a_weighted_sample_is_the_turns_it_stands_for(norm):
    # Rows 0-2 are one prompt and action (same log-probs) with advantages of one sign, at ratios
    # inside and outside the clip range; merged they are one row of weight 3 and mean advantage.
    new = [[0.3, -0.1], [0.3, -0.1], [0.3, -0.1], [-0.4, 0.2]]
    old, ref = [[0.0, 0.1]] * 4, [[0.2, -0.3]] * 4
    mask = [[1, 1]] * 3 + [[1, 0]]
    entropy = [[0.5, 0.4]] * 3 + [[0.9, 0.0]]
    adv = [0.5, 1.5, 2.5, -1.0]

    def loss_and_grad(rows, advantages, weights):
        logps = torch.tensor([new[r] for r in rows], requires_grad=True)
        m = torch.tensor([mask[r] for r in rows], dtype=torch.float32)
        w = torch.tensor(weights)
        loss, _ = policy_loss(
            logps, torch.tensor([old[r] for r in rows]), torch.tensor(advantages), m, epsilon=0.2, epsilon_high=None, norm=norm,
            denominator=normaliser(m, norm, 4, w), ref_logps=torch.tensor([ref[r] for r in rows]), kl_coef=0.1,
            entropy=torch.tensor([entropy[r] for r in rows]), entropy_coef=0.05, sample_weights=w,
        )
        loss.backward()
        return loss.item(), logps.grad

    whole, whole_grad = loss_and_grad([0, 1, 2, 3], adv, [1.0, 1.0, 1.0, 1.0])
    merged, merged_grad = loss_and_grad([0, 3], [1.5, -1.0], [3.0, 1.0])
    assert merged == pytest.approx(whole, abs=1e-6)
    torch.testing.assert_close(merged_grad[0], whole_grad[:3].sum(0))
    torch.testing.assert_close(merged_grad[1], whole_grad[3])
