"""The policy-gradient loss, read top to bottom.

Shapes: B samples (turns) x T completion positions; `mask` is 1 on the model's own reply tokens
(prompt tokens are never in these tensors). Everything is per token; the normaliser decides how
tokens are averaged, and is passed in from outside so gradient accumulation over micro-batches
adds up to exactly the loss of the whole minibatch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class LossStats:
    loss: float
    clip_fraction: float  # share of tokens whose ratio left the clip range in the direction of A
    approx_kl_old: float  # E[(r - 1) - log r] vs the sampling policy (Schulman's k3)
    kl_ref: float  # E[k3] vs the reference (base or reference adapter); 0 when not computed
    entropy: float  # the policy's mean entropy at the reply's positions; 0 when not computed
    tokens: int
    weight: float  # the turns' tokens: each reply token counted as many times as its sample's weight


def k3(ref_logps: torch.Tensor, logps: torch.Tensor) -> torch.Tensor:
    """Schulman's k3 estimator of KL(pi || ref) per token, for tokens drawn from pi: exp(q) - q - 1
    with q = log ref - log pi ("Approximating KL divergence", 2020). Non-negative and unbiased."""
    q = ref_logps - logps
    return torch.exp(q) - q - 1.0


def normaliser(mask: torch.Tensor, mode: str, max_new_tokens: int, weights: torch.Tensor | None = None) -> float:
    """The constant every summed per-token loss of a minibatch is divided by.

    token:    sum of reply tokens (DAPO's token-level average, Yu et al. 2025)
    sequence: number of samples; per-sample means are taken first (GRPO, Shao et al. 2024)
    dr_grpo:  samples x max_new_tokens, a constant (Dr. GRPO, Liu et al. 2025: no length bias)
    A sample of weight w counts as w samples (trainer.learner.merge_duplicates); weights may be
    fractions (algorithm.state_weighting: per_state), so a minibatch can weigh less than one token.
    """
    w = torch.ones(mask.shape[0]) if weights is None else weights.to(mask.device, mask.dtype)
    if mode == "token":
        total = float((mask * w.unsqueeze(1)).sum())
        return total if total > 0 else 1.0  # no reply tokens: the summed loss is 0 too
    if mode == "sequence":
        return float(w.sum())
    if mode == "dr_grpo":
        return float(w.sum() * max_new_tokens)
    raise ValueError(f"unknown loss normalisation {mode!r}")


def policy_loss(
    new_logps: torch.Tensor,  # [B, T] log pi_theta(token), with grad
    old_logps: torch.Tensor,  # [B, T] log pi_old(token) at sampling time, no grad
    advantages: torch.Tensor,  # [B]
    mask: torch.Tensor,  # [B, T] 1 on reply tokens
    *,
    epsilon: float,
    epsilon_high: float | None,
    norm: str,
    denominator: float,
    ref_logps: torch.Tensor | None = None,  # [B, T] log pi_ref(token), no grad
    kl_coef: float = 0.0,
    is_weights: torch.Tensor | None = None,  # [B, T] sampler-correction weights, no grad (1 = none)
    entropy: torch.Tensor | None = None,  # [B, T] the policy's entropy at each position, with grad
    entropy_coef: float = 0.0,
    sample_weights: torch.Tensor | None = None,  # [B] turns each sample stands for, no grad (1 = one)
) -> tuple[torch.Tensor, LossStats]:
    mask = mask.to(new_logps.dtype)
    adv = advantages.unsqueeze(1)  # every token of a reply shares its episode's advantage

    # Importance ratio r_t = pi_theta / pi_old (PPO, Schulman et al. 2017).
    log_ratio = new_logps - old_logps
    ratio = torch.exp(log_ratio)

    # Clipped surrogate: max(-r A, -clip(r, 1-eps, 1+eps_high) A); eps_high > eps is DAPO's clip-higher.
    high = epsilon if epsilon_high is None else epsilon_high
    clipped_ratio = torch.clamp(ratio, 1.0 - epsilon, 1.0 + high)
    per_token = torch.maximum(-ratio * adv, -clipped_ratio * adv)

    # Truncated importance sampling (Yao et al. 2025, "Your efficient RL framework secretly brings
    # you off-policy RL training"): the tokens were drawn by another engine's numerics, so each
    # policy-gradient term is weighted by min(pi_old / pi_sampler, C); the KL term is not.
    if is_weights is not None:
        per_token = per_token * is_weights.detach()

    # KL penalty to the reference, the k3 estimator (used in the loss as in GRPO).
    kl_ref = torch.zeros_like(per_token)
    if ref_logps is not None:
        kl_ref = k3(ref_logps, new_logps)
        if kl_coef > 0:
            per_token = per_token + kl_coef * kl_ref

    # Entropy bonus (Williams & Peng 1991; the A3C/PPO one): -beta * H at every position keeps the
    # policy from collapsing onto one action before the advantages can tell the states apart.
    if entropy is not None and entropy_coef > 0:
        per_token = per_token - entropy_coef * entropy

    # Aggregate: a sum over reply tokens divided by the minibatch constant (see `normaliser`);
    # "sequence" first averages inside each reply so every turn weighs the same.
    # A merged sample of weight w adds w times its loss, as the w identical turns it replaces would.
    if sample_weights is not None:
        per_token = per_token * sample_weights.detach().unsqueeze(1)
    if norm == "sequence":
        per_sample = (per_token * mask).sum(1) / mask.sum(1).clamp(min=1)
        loss = per_sample.sum() / denominator
    else:
        loss = (per_token * mask).sum() / denominator

    with torch.no_grad():
        # Statistics are means over the turns, so a merged sample of weight w counts w times: they
        # read the same whether or not duplicates were merged.
        counted = mask if sample_weights is None else mask * sample_weights.detach().to(mask.dtype).unsqueeze(1)
        total = counted.sum().clamp(min=1e-12)
        # a token is "clipped" when the clip bound, not the ratio, set its gradient to zero
        clipped = ((ratio < 1.0 - epsilon) & (adv < 0)) | ((ratio > 1.0 + high) & (adv > 0))
        stats = LossStats(
            loss=float(loss.detach()),
            clip_fraction=float((clipped.to(mask.dtype) * counted).sum() / total),
            approx_kl_old=float((((ratio - 1) - log_ratio) * counted).sum() / total),
            kl_ref=float((kl_ref * counted).sum() / total) if ref_logps is not None else 0.0,
            entropy=float((entropy.detach() * counted).sum() / total) if entropy is not None else 0.0,
            tokens=int(mask.sum()),
            weight=float(counted.sum()),
        )
    return loss, stats
