"""What the self-play benchmarks share: the shipped model as a choice-mode policy, and evaluation
games between two policies with seats alternating, scored with their intervals (bench/strategy.py,
bench/choice_scoring.py)."""

from __future__ import annotations

import asyncio
import math
import statistics

from arena.match import play_match
from arena.policy import Policy, make_policy
from evaluation.report_card import wilson
from games.registry import make_game

# each game's options: a poker episode is one hand
GAME_OPTIONS = {"kuhn_poker": {"hands": 1}, "leduc_holdem": {"hands": 1}, "tictactoe": {}}


def choice_policy(adapter: str | None, temperature: float, name: str, *, prompt: str) -> Policy:
    # Choice scoring runs on the hf engine (docs/architecture.md says why): starting vLLM too would
    # cost start-up time and memory for nothing. `prompt`: the harness's prompt variant, the one
    # the adapter was trained with.
    spec = f"hf:local+{adapter}" if adapter else "local"
    shown = "" if prompt == "default" else f",prompt={prompt}"
    policy = make_policy(f"{spec},engine=hf,mode=choice,obs=state{shown},temperature={temperature:g}")
    policy.name = name
    return policy


async def play_games(game_id: str, subject: Policy, opponent: Policy, games: int, seed: int, in_flight: int) -> dict:
    """`games` matches, subject in seat 0 on even ones; its mean score (chips per hand in poker) with
    a 95% normal interval, and the share won (poker) or not lost (Tic-Tac-Toe) with Wilson's."""
    semaphore = asyncio.Semaphore(in_flight)

    async def one(i: int) -> float | None:
        seat = i % 2
        seats = [opponent, opponent]
        seats[seat] = subject
        async with semaphore:
            record = await play_match(make_game(game_id, 2, **GAME_OPTIONS[game_id]), seats, seed + i // 2,
                                      match_id=f"strategy-eval-{opponent.name}-{i}")
        return float(record.outcome["scores"][seat]) if record.outcome else None

    results = await asyncio.gather(*(one(i) for i in range(games)))
    scores = [r for r in results if r is not None]
    if not scores:
        raise RuntimeError(f"none of the {games} evaluation games against {opponent.name} finished")
    mean = statistics.fmean(scores)
    half = 1.96 * statistics.stdev(scores) / math.sqrt(len(scores)) if len(scores) > 1 else float("nan")
    # poker: a hand is won when the subject gains chips; Tic-Tac-Toe: a game is not lost at 0.5 or 1
    good = sum(s > 0 for s in scores) if game_id != "tictactoe" else sum(s >= 0.5 for s in scores)
    low, high = wilson(good, len(scores))
    return {"mean_score": round(mean, 4), "ci95": [round(mean - half, 4), round(mean + half, 4)], "games": len(scores),
            "unfinished": games - len(scores), "good_rate": round(good / len(scores), 4), "good_rate_ci95": [round(low, 4), round(high, 4)]}
