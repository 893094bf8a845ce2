"""How much of a sampled self-play step the private contrast can centre, weighed by visits or per state.

    python -m bench.experiments.contrast_coverage --game leduc_holdem --prompt private-last
    python -m bench.experiments.contrast_coverage --game leduc_holdem --uniform   # no model: uniform play

algorithm.private_contrast centres a move's advantage across the private cards it was made from at
one public state. A move met at its public state from one card only has nothing to be compared
with; by visits such turns are a few percent of a step, but `state_weighting: per_state` gives every
state met one unit of weight, and then they are a large share, which (left whole) carries what the
cards share into the one LoRA (docs/experiments/leduc-selfplay.md, 2026-11-29 evening). This draws
steps as bench.strategy plays them (GROUPS deals, GROUP_SIZE hands of each, both seats from one
strategy: the base model's at the training temperature, or uniform play) on the exact game tree, and
reports, as medians over seeds, the decisions and information sets a step meets and the share of
its weight in uncompared decisions: by visits, per state, and per state at sets met once (which the
state baseline cannot centre either). Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import statistics
from collections import Counter, defaultdict

from bench.head_to_head import GAME_OPTIONS, choice_policy
from bench.strategy import GROUPS
from evaluation.exploitability import GameTree, InfoKey, Strategy, build_tree, policy_strategy, uniform_strategy
from games.registry import make_game
from trainer.advantages import state_shares
from trainer.tabular_selfplay import PROBABILITY_FLOOR, play_hand, public_states

FIGURES = ("decisions", "information_sets", "uncompared_share_by_visits", "uncompared_share_per_state", "uncompared_met_once_share_per_state")


def draw_step(tree: GameTree, strategy: Strategy, groups: int, group_size: int, rng: random.Random) -> list[tuple[InfoKey, str]]:
    """A step's decisions: `groups` deals drawn by chance, each played `group_size` times (the
    reference learner's own hand sampler, on the strategy's log-probabilities)."""
    moves = {k: info.moves for k, info in tree.infosets.items()}
    logits = {k: [math.log(max(strategy[k][m], PROBABILITY_FLOOR)) for m in moves[k]] for k in moves}
    chances = [chance for chance, _ in tree.deals]
    decisions = []
    for _ in range(groups):
        root = rng.choices(tree.deals, chances)[0][1]
        for _ in range(group_size):
            path, _ = play_hand(root, logits.__getitem__, moves, rng)
            decisions.extend((key, moves[key][index]) for key, index in path)
    return decisions


def coverage(decisions: list[tuple[InfoKey, str]], public: dict[InfoKey, tuple[int, str]]) -> dict[str, float]:
    """The step's size and the shares of its weight the contrast cannot centre (module doc)."""
    cards: dict[tuple, set] = defaultdict(set)
    for key, move in decisions:
        cards[(public[key], move)].add(key)
    uncompared = [len(cards[(public[key], move)]) < 2 for key, move in decisions]
    states = [key for key, _ in decisions]
    shares = state_shares(states)
    visits = Counter(states)
    once = [visits[key] == 1 for key in states]
    per_state = sum(shares)
    return {
        "decisions": len(decisions),
        "information_sets": len(visits),
        "uncompared_share_by_visits": sum(uncompared) / len(decisions),
        "uncompared_share_per_state": sum(s for s, u in zip(shares, uncompared) if u) / per_state,
        "uncompared_met_once_share_per_state": sum(s for s, u, o in zip(shares, uncompared, once) if u and o) / per_state,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=["kuhn_poker", "leduc_holdem"], default="leduc_holdem")
    parser.add_argument("--prompt", default="default", help="the base's prompt variant (bench.strategy --prompt), e.g. private-last")
    parser.add_argument("--temperature", type=float, default=5.0, help="the base's choice temperature (bench.strategy trains at 5)")
    parser.add_argument("--groups", type=int, default=None, help="deals a step (default: bench.strategy's for the game)")
    parser.add_argument("--group-size", type=int, default=4, help="hands of each deal (bench.strategy's GRPO group)")
    parser.add_argument("--seeds", type=int, default=20, help="steps drawn; the figures are their medians")
    parser.add_argument("--uniform", action="store_true", help="uniform play instead of the base model (no model needed)")
    args = parser.parse_args()
    groups = GROUPS[args.game] if args.groups is None else args.groups
    if groups < 1 or args.group_size < 1 or args.seeds < 1 or not args.temperature > 0:
        parser.error("--groups, --group-size and --seeds must be at least 1, --temperature above 0")

    tree = build_tree(lambda: make_game(args.game, 2, **GAME_OPTIONS[args.game]))
    if args.uniform:
        strategy = uniform_strategy(tree)
    else:
        strategy = asyncio.run(policy_strategy(tree, choice_policy(None, args.temperature, "base", prompt=args.prompt)))
    public = public_states(tree)
    runs = [coverage(draw_step(tree, strategy, groups, args.group_size, random.Random(seed)), public) for seed in range(args.seeds)]
    figures = {name: round(statistics.median(run[name] for run in runs), 4) for name in FIGURES}
    spread = {f"{name}_range": [round(min(run[name] for run in runs), 4), round(max(run[name] for run in runs), 4)] for name in FIGURES[2:]}
    for name in FIGURES:
        print(f"{name}: {figures[name]}")
    print(json.dumps({"game": args.game, "policy": "uniform" if args.uniform else f"base, prompt={args.prompt}, temperature={args.temperature:g}",
                      "hands_per_step": groups * args.group_size, "seeds": args.seeds, **figures, **spread}))


if __name__ == "__main__":
    main()
