"""What did Tic-Tac-Toe self-play change in the moves? Each policy's move quality, read exactly.

    python -m bench.experiments.ttt_move_quality --adapter trained=runs/bench-strategy-tictactoe/final-average
    python -m bench.experiments.ttt_move_quality --positions 300 --adapter a=PATH --adapter b=PATH

bench.strategy --game tictactoe gives one number per policy, its draw-or-win rate against the
minimax `bot`, sampled and exactly. This script says where such a number comes from, with no
sampling (the exact rates are evaluation.tictactoe_vs_bot's):
- the exact draw-or-win rate of the uniform random mover against the same bot (its ties broken
  uniformly, as `bot` breaks them), the floor a policy that learned nothing but spreading out
  its moves would reach;
- each policy's exact draw-or-win rate against the bot (`exact_draw_or_win_vs_bot`): the game tree
  of the policy against the bot, walked to the end, the policy's moves weighted by its choice
  probabilities at every observation it can meet there (the prompt names the last move, so the
  same board reached in another order is another question), the bot's ties weighted uniformly.
  It is what bench.strategy's 400 sampled games estimate, without their +-0.035 of noise;
- over positions the model may face (reached by random moves against the bot, the model in
  either seat, each board once), the base's and each adapter's choice-mode move probabilities at
  temperature 1 (the bench's): the share of probability on value-keeping moves (those with the
  best game-theoretic result, win > draw > loss, under perfect play after them; the uniform
  mover's share beside it), the mean entropy of the move draw, and which cells are the argmax
  how often (one cell everywhere is the collapse of the 2026-11-24 run).
Ends with one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import statistics
from collections import Counter

from arena.policy import MoveRequest
from bench.head_to_head import choice_policy
from evaluation.tictactoe_vs_bot import exact_vs_bot, uniform_draw_or_win
from games.registry import make_game
from games.tictactoe import MARKS, _minimax

TEMPERATURE = 1.0  # bench.strategy's for Tic-Tac-Toe, training and evaluation


def outcome_sign(value: int) -> int:
    """_minimax counts how soon a result comes; only win (1), draw (0) or loss (-1) matters here."""
    return (value > 0) - (value < 0)


def positions(count: int, seed: int) -> list[tuple[str, object]]:
    """`count` distinct boards where the model is to move with a choice to make, reached by random
    moves against the bot from either seat: (board, observation)."""
    rng = random.Random(seed)
    found: dict[str, object] = {}
    while len(found) < count:
        game = make_game("tictactoe", 2)
        game.reset(rng.randrange(2**31))
        me = rng.randrange(2)
        while not game.is_over():
            (player,) = game.to_act()
            if player == me:
                obs = game.observe(player)
                if len(obs.legal_moves) > 1 and game.board not in found:
                    found[game.board] = obs
                move = rng.choice(obs.legal_moves)
            else:
                move = game.bot_move(player, rng)
            game.step(player, move)
    return list(found.items())[:count]


def value_keeping(board: str, player: int, moves: list[str]) -> set[str]:
    """The moves after which perfect play still gives `player` the best result on offer."""
    mark, other = MARKS[player], MARKS[1 - player]
    values = {m: outcome_sign(-_minimax(board[: int(m)] + mark + board[int(m) + 1 :], other)) for m in moves}
    best = max(values.values())
    return {m for m, v in values.items() if v == best}


async def measure(name: str, adapter: str | None, boards: list[tuple[str, object]], with_exact: bool) -> dict:
    policy = choice_policy(adapter, TEMPERATURE, name)
    rules = make_game("tictactoe", 2).rules
    requests = [MoveRequest(game_id="tictactoe", game_name="Tic-Tac-Toe", rules=rules, observation=obs) for _, obs in boards]
    dists = await asyncio.gather(*(policy.move_distribution(r) for r in requests))
    kept, uniform_kept, entropies, argmax = [], [], [], Counter()
    for (board, obs), dist in zip(boards, dists):
        good = value_keeping(board, obs.player, list(obs.legal_moves))
        kept.append(sum(dist[m] for m in good))
        uniform_kept.append(len(good) / len(dist))
        entropies.append(-sum(p * math.log(p) for p in dist.values() if p > 0))
        argmax[max(dist, key=dist.get)] += 1
    exact = await exact_vs_bot(policy) if with_exact else None
    return {
        "policy": name,
        "value_keeping_mass": round(statistics.fmean(kept), 4),
        "uniform_value_keeping_mass": round(statistics.fmean(uniform_kept), 4),
        "entropy": round(statistics.fmean(entropies), 4),
        "argmax_cells": dict(argmax.most_common()),
        **({"exact_draw_or_win_vs_bot": exact} if exact is not None else {}),
    }


async def run(args: argparse.Namespace) -> dict:
    boards = positions(args.positions, args.seed)
    rows = []
    for name, adapter in [("base", None), *args.adapter]:
        row = await measure(name, adapter, boards, args.exact)
        rows.append(row)
        top = ", ".join(f"{cell}: {n}" for cell, n in list(row["argmax_cells"].items())[:4])
        exact = row.get("exact_draw_or_win_vs_bot")
        exact_text = f"  exact draw-or-win vs bot {exact['alternating']:.4f} (X {exact['as_x']:.4f}, O {exact['as_o']:.4f})" if exact else ""
        print(f"{name:>12}: value-keeping mass {row['value_keeping_mass']:.3f} (uniform {row['uniform_value_keeping_mass']:.3f})  "
              f"entropy {row['entropy']:.3f}  argmax cells {top}{exact_text}", flush=True)
    as_x, as_o = uniform_draw_or_win("." * 9, 0, 0), uniform_draw_or_win("." * 9, 1, 0)
    print(f"uniform random vs bot, exact draw-or-win: as X {as_x:.4f}, as O {as_o:.4f}, seats alternating {(as_x + as_o) / 2:.4f}")
    return {"positions": len(boards), "uniform_draw_or_win_vs_bot": round((as_x + as_o) / 2, 4), "policies": rows}


def adapter_arg(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"--adapter {text!r}: expected NAME=PATH")
    return name, path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--adapter", type=adapter_arg, action="append", default=[], help="NAME=PATH of a LoRA adapter (repeatable)")
    parser.add_argument("--positions", type=int, default=150, help="distinct boards to read the policies at")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--exact", action=argparse.BooleanOptionalAction, default=True,
                        help="also each policy's exact draw-or-win rate against the bot (scores ~1,800 observations a policy)")
    print(json.dumps(asyncio.run(run(parser.parse_args()))))


if __name__ == "__main__":
    main()
