"""How many games each scheduler needs to recover the true order of simulated players.

16 simulated players with known Bradley-Terry strengths (log-strengths evenly spaced by `--gap`)
play two-player games whose outcome is drawn from the model. Each scheduler hands out pairings in
batches of `--batch` (as a league with that many matches in flight would), and after each batch
the Bradley-Terry leaderboard is compared with the true order by Kendall's tau. The figure is the
number of games until tau >= 0.9, median over seeds. Games to the target vary about tenfold from
seed to seed, so the ratio of medians is noisy: the script also prints a 90% bootstrap interval of
the ratio (seeds resampled, the same seeds for both schedulers).

    .venv/bin/python -m bench.ranking [--seeds 300] [--gap 0.35]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import numpy as np
from scipy.stats import kendalltau

from league.ratings import OnlineRatings, bt_solve
from league.results import GameResult
from league.scheduling import GameSlot, make_scheduler

PLAYERS = 16


def games_to_target(kind: str, seed: int, gap: float, batch: int, target: float, cap: int, check_every: int) -> int:
    names = [f"p{i:02d}" for i in range(PLAYERS)]
    true_theta = {name: gap * i for i, name in enumerate(names)}
    slots = [GameSlot("sim")]
    if kind == "round_robin":
        scheduler = make_scheduler(kind, slots, names, matches_per_pair=cap // (PLAYERS * (PLAYERS - 1) // 2) + 1, seed=seed)
    else:
        scheduler = make_scheduler(kind, slots, names, budget=cap, seed=seed)
    rng = np.random.default_rng(seed + 10_000)
    finished: list[GameResult] = []
    standings = OnlineRatings(systems=("bt",))  # incremental tallies; the fit is the league's own
    issued = 0
    while issued < cap:
        pairings = scheduler.next_pairings(finished, issued, batch)
        if not pairings:
            break
        issued += len(pairings)
        for pairing in pairings:
            a, b = pairing.seats
            p_a = 1.0 / (1.0 + np.exp(true_theta[b] - true_theta[a]))
            ranks = (1, 2) if rng.random() < p_a else (2, 1)
            result = GameResult(pairing.key, pairing.game_id, pairing.seats, ranks)
            finished.append(result)
            standings.fold(result)
        if len(finished) % check_every and issued < cap:
            continue
        estimate = bt_solve(*standings.overall.bt_matrices(names))[0]
        tau = kendalltau(estimate, [true_theta[n] for n in names]).statistic
        if tau >= target:
            return len(finished)
    return cap


def ratio_interval(needed: dict[str, list[int]], resamples: int = 2000) -> tuple[float, float]:
    """90% bootstrap interval of median(adaptive) / median(round_robin) over resampled seeds."""
    adaptive, round_robin = np.array(needed["adaptive"]), np.array(needed["round_robin"])
    picks = np.random.default_rng(0).integers(0, len(adaptive), (resamples, len(adaptive)))
    ratios = np.median(adaptive[picks], axis=1) / np.median(round_robin[picks], axis=1)
    low, high = np.percentile(ratios, [5, 95])
    return float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=300)
    parser.add_argument("--gap", type=float, default=0.35, help="log-strength gap between neighbours")
    parser.add_argument("--batch", type=int, default=8, help="matches in flight between rating updates")
    parser.add_argument("--target", type=float, default=0.9, help="Kendall tau to reach")
    parser.add_argument("--check-every", type=int, default=8, help="compare with the true order every this many games")
    parser.add_argument("--kinds", default="round_robin,swiss,adaptive")
    parser.add_argument("--cap", type=int, default=5_000, help="give up after this many games (the worst of 300 seeds needs under 800)")
    args = parser.parse_args()
    print(f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"{PLAYERS} players, log-strength gap {args.gap}, batches of {args.batch}, target tau {args.target}, {args.seeds} seeds")
    medians, needed = {}, {}
    for kind in args.kinds.split(","):
        start = time.perf_counter()
        needed[kind] = [games_to_target(kind, seed, args.gap, args.batch, args.target, args.cap, args.check_every) for seed in range(args.seeds)]
        medians[kind] = statistics.median(needed[kind])
        print(f"{kind:12s} median games {medians[kind]:8.0f}   (min {min(needed[kind])}, max {max(needed[kind])}, {time.perf_counter() - start:.1f} s)")
    ratio = medians["adaptive"] / medians["round_robin"]
    low, high = ratio_interval(needed)
    print(f"adaptive / round_robin = {ratio:.2f}, 90% bootstrap interval over seeds {low:.2f}-{high:.2f} (target <= 0.40)")
    print(json.dumps({
        "adaptive_over_round_robin": round(ratio, 3), "ratio_90pct_interval": [round(low, 3), round(high, 3)],
        "median_games": medians, "seeds": args.seeds, "gap": args.gap, "batch": args.batch,
    }))


if __name__ == "__main__":
    main()
