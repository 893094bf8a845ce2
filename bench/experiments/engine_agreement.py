"""Do the two engines play the same greedy moves? A sample of core-v1's matches on each.

    python -m bench.experiments.engine_agreement                        # hf vs vLLM, the default dtype
    python -m bench.experiments.engine_agreement --second vllm:bfloat16 # vLLM in bfloat16
    python -m bench.experiments.engine_agreement --params parse=lenient # longer matches

The `local` policy at temperature 0 (core-v1's smollm2 reference, engine left open) plays seat 0
against `random` in one match per seed below, on the first engine, then on the second; every
reply of seat 0 is compared. Prints the first differing reply of each match and one line of JSON:
replies compared before a difference, and matches that differed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

from arena.llm.engines import shutdown_engines
from arena.match import play_match
from arena.policy import make_policy
from games.registry import make_game

# (game, players, seeds): core-v1's games and their first seeds (evaluation/suites/core-v1.yaml)
SAMPLE = [("tictactoe", 2, [101, 102]), ("connect_four", 2, [201]), ("kuhn_poker", 2, [301, 302]),
          ("liars_dice", 3, [401]), ("negotiation", 2, [501]), ("textarena:TicTacToe-v0", 2, [601])]


async def replies(variant: str, params: str) -> tuple[dict[str, list[str]], float]:
    """Seat 0's replies per match on `variant` (hf, vllm or vllm:DTYPE), and the seconds taken."""
    kind, _, dtype = variant.partition(":")
    shutdown_engines()  # a fresh engine, in the dtype asked for
    if dtype:
        os.environ["ARENA_DTYPE"] = dtype
    else:
        os.environ.pop("ARENA_DTYPE", None)
    policy = make_policy(f"local,engine={kind},temperature=0,max_new_tokens=32" + (f",{params}" if params else ""))
    started = time.perf_counter()

    async def one(game: str, players: int, seed: int) -> tuple[str, list[str]]:
        seats = [policy, *(make_policy("random") for _ in range(players - 1))]
        record = await play_match(make_game(game, players), seats, seed, match_id=f"{game}:{seed}")
        return f"{game}:{seed}", [t.raw for t in record.turns if t.player == 0]

    found = dict(await asyncio.gather(*(one(game, players, seed) for game, players, seeds in SAMPLE for seed in seeds)))
    return found, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", default="hf")
    parser.add_argument("--second", default="vllm")
    parser.add_argument("--params", default="", help="extra spec parameters, e.g. parse=lenient")
    args = parser.parse_args()
    first, first_s = asyncio.run(replies(args.first, args.params))
    second, second_s = asyncio.run(replies(args.second, args.params))
    same = differing = 0
    for match, turns in first.items():
        for index, (a, b) in enumerate(zip(turns, second[match])):
            if a != b:
                differing += 1
                print(f"{match} reply {index}: {a[:70]!r} | {b[:70]!r}")
                break
            same += 1
    print(json.dumps({"first": args.first, "second": args.second, "params": args.params, "matches": len(first),
                      "matches_differing": differing, "replies_same_before_a_difference": same,
                      "first_s": round(first_s, 1), "second_s": round(second_s, 1)}))


if __name__ == "__main__":
    main()
