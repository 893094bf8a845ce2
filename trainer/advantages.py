"""Advantages: one number per episode (a trained seat of a match), shared by all its turns.

Three estimators:
- grpo:      (R - mean_g) / (std_g + eps) within a group g of games from the same seed, seat and
             opponent (Shao et al. 2024, DeepSeekMath); `scale_by_std=False` drops the division
             (Liu et al. 2025, Dr. GRPO).
- spiral:    R - b[game, role], b an EMA of that role's past rewards (Liu et al. 2025, SPIRAL's
             role-conditioned advantage estimation). The baseline is READ before it is updated with
             the batch, so an episode never sees its own reward in its baseline.
- reinforce: R - mean of the batch's rewards for the same (game, role) (Williams 1992, with a
             baseline).

Optional per-attempt credit (`rewards.attempt_credit` = w > 0): an episode-level reward credits
a valid reply in a lost game exactly like the invalid ones around it. The game judges every
attempt as it is made, so each attempt t may also carry its own term
    A_t = A_episode + w * (v_t - mean v over the batch's attempts of the same (game, role)),
v_t = -1 for an attempt the game rejected, 0 for one it accepted (a REINFORCE baseline per role).
It is reward shaping for legality, off by default.

Optional per-state baseline (`algorithm.state_baseline`): an episode's advantage credits every
decision in it alike, so a move that was merely present in won games is raised wherever it is legal
(Kuhn: check and call with every card; Tic-Tac-Toe: one cell in every position). Where the same
decision state (the same prompt and legal moves) was visited more than once in a step, each
decision's advantage is centred on the mean advantage of the OTHER visits to that state:
    A_i <- A_i - mean_{j != i, s_j = s_i} A_j.
A baseline that depends on the state but not on the action taken there leaves the policy gradient
unbiased (Williams 1992; Sutton et al. 2000), and leaving the decision itself out keeps it
independent of its own action. What remains is how much better this move did than the others made
in the same state: the information sets are kept apart in the signal, as the tabular reference
learner keeps them apart in its parameters. A state visited once keeps its advantage.

Optional private contrast (`algorithm.private_contrast` = lambda in (0, 1]): one LoRA moves the
information sets that differ only in a private card nearly together (their gradients have cosine
~0.997 in Kuhn poker, bench/experiments/card_separation.py), so the update mostly follows what the
cards' signals share, and Adam, which scales each step to the gradient's size, leaves the part that
tells the cards apart small: self-play ends card-blind. Where one move was made at one public state
(the same prompt but for the seat's secret phrases, Game.secrets; turn meta "public_state") from
two or more private states in a step, each of those decisions loses lambda times their mean
advantage:
    A_i <- A_i - lambda * mean_{j: public_j = public_i, move_j = move_i} A_j.
At lambda = 1 those advantages sum to zero, so to first order the step no longer moves what every
card at that public state shares, only how the cards differ. Unlike the state baseline this depends
on the move: it biases the gradient on purpose, trading the shared direction (still pulled by the
KL and entropy terms) for the contrast. Off by default.

Optional per-state weighting (`algorithm.state_weighting: per_state`): each turn counts once in
the loss, so a state weighs as much as it is met, and the policy gradient's weight for an
information set carries its reach. In Leduc Hold'em those reaches span orders of magnitude, and one
LoRA shared by every state follows the few common ones (a first-round bet) while the rare ones the
best response exploits barely move; Adam cannot rescale that, its parameters being shared by every
state. With per_state the turns met at one decision state in a step share one unit of weight,
    w_i = 1 / #{j : s_j = s_i},
so every state met pulls alike however rarely, as one free logit per state under Adam does (the
tabular reference learner). It changes what the step averages; the private contrast then takes its
mean with these weights, so its centring holds for the loss, and it centres a move met at a public
state from one private state only too: by visits such decisions are a few percent of a step's
weight (3.9% of a Leduc step of 256 hands, bench/experiments/contrast_coverage.py), but weighed
alike they are 29% (19% met once, so neither baseline touches them), and their uncentred
advantages alone would carry what every card shares into the one LoRA, the card-blind direction
the contrast exists to hold back. Off by default.
On the exact, noiseless signal (bench/experiments/expected_gradient.py --per-infoset) the LoRA's
exploitability after 8 updates goes from 0.831 to 0.646 of the base's in Kuhn, and in Leduc falls
steadily for the first time (0.945 after 10, against 0.988 by reach; docs/experiments/leduc-selfplay.md).

Why groups and baselines are keyed by role: in self-play both seats of a zero-sum game are the
learner; their rewards sum to zero, so a group holding both would have mean 0 and the two seats'
signals would cancel in its statistics. Every key here contains the seat.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Hashable, Sequence

EPS = 1e-4  # std floor: groups where every game scored the same get advantage 0, not inf


def grpo_advantages(rewards: Sequence[float], groups: Sequence[Hashable], scale_by_std: bool = True) -> list[float]:
    """Group-normalised advantages. A group of one carries no signal (advantage 0)."""
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, g in enumerate(groups):
        members[g].append(i)
    out = [0.0] * len(rewards)
    for idx in members.values():
        values = [rewards[i] for i in idx]
        mean = sum(values) / len(values)
        # population std, as torch.std(unbiased=False); the group is the whole population sampled
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        for i in idx:
            centred = rewards[i] - mean
            out[i] = centred / (std + EPS) if scale_by_std else centred
    return out


def reinforce_advantages(rewards: Sequence[float], roles: Sequence[Hashable]) -> list[float]:
    """R minus the batch mean reward of the same (game, role)."""
    return grpo_advantages(rewards, roles, scale_by_std=False)


class RoleBaselines:
    """SPIRAL's role-conditioned EMA baselines b[(game, role)], starting at 0."""

    def __init__(self, decay: float = 0.95, values: dict[str, float] | None = None):
        if not 0 <= decay < 1:
            raise ValueError("decay must be in [0, 1)")
        self.decay = decay
        self.values: dict[str, float] = dict(values or {})

    @staticmethod
    def key(role: tuple[str, int]) -> str:
        return f"{role[0]}#{role[1]}"

    def advantages(self, rewards: Sequence[float], roles: Sequence[tuple[str, int]]) -> list[float]:
        """A_i = R_i - b[role_i] with the baselines as they were before this batch, then fold the
        batch in, in order: b <- decay * b + (1 - decay) * R."""
        keys = [self.key(r) for r in roles]
        out = [reward - self.values.get(k, 0.0) for reward, k in zip(rewards, keys)]
        for reward, k in zip(rewards, keys):
            self.values[k] = self.decay * self.values.get(k, 0.0) + (1.0 - self.decay) * reward
        return out

    def state_dict(self) -> dict[str, object]:
        return {"decay": self.decay, "values": dict(self.values)}

    @classmethod
    def from_state(cls, state: dict[str, object]) -> "RoleBaselines":
        return cls(float(state["decay"]), dict(state["values"]))  # type: ignore[arg-type]


def compute_advantages(
    method: str,
    rewards: Sequence[float],
    groups: Sequence[Hashable],
    roles: Sequence[tuple[str, int]],
    baselines: RoleBaselines,
    scale_by_std: bool = True,
) -> list[float]:
    if method == "grpo":
        return grpo_advantages(rewards, groups, scale_by_std)
    if method == "spiral":
        return baselines.advantages(rewards, roles)
    if method == "reinforce":
        return reinforce_advantages(rewards, roles)
    raise ValueError(f"unknown advantage estimator {method!r}")


def state_baseline(advantages: Sequence[float], states: Sequence[Hashable | None]) -> list[float]:
    """Each advantage minus the leave-one-out mean advantage of the other decisions in the same
    state (module doc); a decision whose state is None or seen once is unchanged."""
    members: dict[Hashable, list[int]] = defaultdict(list)
    for i, state in enumerate(states):
        if state is not None:
            members[state].append(i)
    out = list(advantages)
    for idx in members.values():
        if len(idx) < 2:
            continue
        total = sum(advantages[i] for i in idx)
        for i in idx:
            out[i] = advantages[i] - (total - advantages[i]) / (len(idx) - 1)
    return out


def private_contrast(advantages: Sequence[float], public_states: Sequence[Hashable | None], moves: Sequence[Hashable],
                     private_states: Sequence[Hashable], strength: float, weights: Sequence[float] | None = None,
                     uncompared: bool = False) -> list[float]:
    """Each advantage minus `strength` times the mean advantage of the same move at the same public
    state (module doc), where that move was made there from at least two private states, or from
    any number with `uncompared` (then a move met from one private state loses its own mean); a
    decision without a public state is unchanged. With `weights` (the loss's sample weights, e.g.
    `state_shares`) the mean is weighted by them, so at strength 1 the weighted advantages of each
    centred group sum to zero, as the loss sees them."""
    members: dict[tuple[Hashable, Hashable], list[int]] = defaultdict(list)
    for i, (public, move) in enumerate(zip(public_states, moves)):
        if public is not None:
            members[(public, move)].append(i)
    out = list(advantages)
    for idx in members.values():
        if not uncompared and len({private_states[i] for i in idx}) < 2:
            continue
        w = [1.0] * len(idx) if weights is None else [weights[i] for i in idx]
        shift = strength * sum(wi * advantages[i] for wi, i in zip(w, idx)) / sum(w)
        for i in idx:
            out[i] = advantages[i] - shift
    return out


def attempt_credit(valid: Sequence[bool], roles: Sequence[Hashable], weight: float) -> list[float]:
    """Each attempt's own legality term, w * (v_t - role mean), v_t = -1 if rejected else 0."""
    if weight == 0:
        return [0.0] * len(valid)
    values = [0.0 if ok else -1.0 for ok in valid]
    return [weight * a for a in reinforce_advantages(values, roles)]


def state_shares(states: Sequence[Hashable]) -> list[float]:
    """Each decision's share of its state's unit weight, 1 / (visits to its state in the batch)
    (`algorithm.state_weighting: per_state`, module doc)."""
    visits: dict[Hashable, int] = defaultdict(int)
    for state in states:
        visits[state] += 1
    return [1.0 / visits[state] for state in states]
