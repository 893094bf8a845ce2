"""How fast choice mode evaluates: the shipped model scoring whole legal moves on the hf engine.

    .venv/bin/python -m bench.choice_scoring [--kuhn-hands 64] [--tictactoe-games 32] [--in-flight 32]

Three workloads, one after the other in one process (one engine):
- Kuhn poker hands, the base model in choice mode against itself, seats alternating (what
  bench/strategy.py's evaluation and self-play rollouts do);
- Tic-Tac-Toe games of the base model in choice mode against the minimax `bot`;
- the base model's exact Kuhn exploitability (all 12 information sets in one batch).

Every game is arena.match.play_match, --in-flight of them at once, so the engine sees batches of
both seats' moves, as in an evaluation league. Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import time

from arena.policy import make_policy
from bench.head_to_head import choice_policy, play_games
from evaluation.exploitability import build_tree, evaluate, policy_strategy
from games.registry import make_game


async def run(args: argparse.Namespace) -> dict:
    base = choice_policy(None, 1.0, "base", prompt="default")
    started = time.perf_counter()
    kuhn = await play_games("kuhn_poker", base, base, args.kuhn_hands, args.seed, args.in_flight)
    kuhn_s = time.perf_counter() - started
    print(f"{args.kuhn_hands} Kuhn hands: {kuhn_s:.1f} s", flush=True)

    started = time.perf_counter()
    ttt = await play_games("tictactoe", base, make_policy("bot"), args.tictactoe_games, args.seed, args.in_flight)
    ttt_s = time.perf_counter() - started
    print(f"{args.tictactoe_games} Tic-Tac-Toe games against bot: {ttt_s:.1f} s", flush=True)

    tree = build_tree(lambda: make_game("kuhn_poker", 2, hands=1))
    started = time.perf_counter()
    exploitability = evaluate(tree, await policy_strategy(tree, base)).exploitability
    exploit_s = time.perf_counter() - started
    print(f"Kuhn exploitability {exploitability:.4f}: {exploit_s:.1f} s", flush=True)

    stats = base.engine.stats
    return {
        "kuhn_hands_per_s": round(kuhn["games"] / kuhn_s, 3),
        "tictactoe_games_per_s": round(ttt["games"] / ttt_s, 3),
        "kuhn_exploitability_s": round(exploit_s, 2),
        "kuhn_hands": kuhn["games"],
        "tictactoe_games": ttt["games"],
        "engine_busy_s": round(stats.busy_s, 1),
        "shared_prefix_tokens": stats.cached_prompt_tokens,
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kuhn-hands", type=int, default=64)
    parser.add_argument("--tictactoe-games", type=int, default=32)
    parser.add_argument("--in-flight", type=int, default=32, help="games at once")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if min(args.kuhn_hands, args.tictactoe_games) < 2 or args.in_flight < 1:
        parser.error("--kuhn-hands and --tictactoe-games must be at least 2, --in-flight at least 1")
    print(json.dumps(asyncio.run(run(args))))


if __name__ == "__main__":
    main()
