"""Games per second of our native games against TextArena's own loop, side by side.

Both loops play uniformly random LEGAL moves to the end of the game, with no rendering:
- ours: reset(seed); while not over: to_act -> legal_moves -> random choice -> step
- TextArena: env.reset(seed); while not done: legal moves read from its state -> env.step
  (the raw env, without observation wrappers, and with its message queues cleared each step so
  they do not grow; that is the cheapest honest TextArena loop).
Repeats are interleaved (ours, theirs, ours, ...) so both see the same machine load; medians.

    .venv/bin/python -m bench.engine [--seconds 1.0] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time

from games.registry import make_game

PAIRS = {  # our id -> TextArena id (legal moves from games._textarena_moves.LEGAL_MOVES)
    "tictactoe": "TicTacToe-v0",
    "connect_four": "ConnectFour-v0",
    "kuhn_poker": "KuhnPoker-v0",
}


def native_rate(game_id: str, seconds: float) -> float:
    game = make_game(game_id)
    rng = random.Random(0)
    games, seed = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        game.reset(seed)
        while not game.is_over():
            player = game.to_act()[0]
            game.step(player, rng.choice(game.legal_moves(player)))
        games += 1
        seed += 1
    return games / (time.perf_counter() - start)


def textarena_rate(env_id: str, seconds: float) -> float:
    import contextlib

    import textarena as ta
    from textarena.envs.registration import ENV_REGISTRY

    from games._textarena_moves import LEGAL_MOVES

    lister = LEGAL_MOVES[env_id]
    spec = ENV_REGISTRY[env_id]
    module, cls = spec.entry_point.split(":")
    env_class = getattr(__import__(module, fromlist=[cls]), cls)
    rng = random.Random(0)
    games, seed = 0, 0
    start = time.perf_counter()
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        while time.perf_counter() - start < seconds:
            env = env_class(**spec.kwargs)
            env.reset(num_players=2, seed=seed)
            state = env.state
            while not state.done:
                env.step(rng.choice(lister(env, state.current_player_id)))
                for queue in state.observations.values():
                    queue.clear()
            games += 1
            seed += 1
    return games / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"{'game':14s} {'ours games/s':>14s} {'TextArena':>12s} {'ratio':>7s}")
    for ours, theirs in PAIRS.items():
        native, textarena = [], []
        for _ in range(args.repeats):
            native.append(native_rate(ours, args.seconds))
            textarena.append(textarena_rate(theirs, args.seconds))
        n, t = statistics.median(native), statistics.median(textarena)
        results[ours] = {"native": round(n), "textarena": round(t), "ratio": round(n / t, 2)}
        print(f"{ours:14s} {n:14.0f} {t:12.0f} {n / t:7.2f}")
    print(json.dumps({
        "native_over_textarena": {k: v["ratio"] for k, v in results.items()},
        "games_per_s": {k: {"native": v["native"], "textarena": v["textarena"]} for k, v in results.items()},
        "repeats": args.repeats,
        "seconds": args.seconds,
    }))


if __name__ == "__main__":
    main()
