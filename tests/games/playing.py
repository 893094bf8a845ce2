"""Play-out helpers the per-game rule tests share: scripted move lists and bot-against-random runs."""

from __future__ import annotations

import asyncio
import random

from arena.game import Game
from arena.match import play_match
from arena.policy import make_policy
from games.registry import make_game


def play(game: Game, moves: list[str]) -> None:
    """Play `moves` in turn order (first player still to act each time); all must be accepted."""
    for move in moves:
        player = game.to_act()[0]
        result = game.step(player, move)
        assert result.valid, f"{move!r} rejected: {result.feedback}"


def bot_vs_random(game_id: str, games: int, **options: object) -> tuple[float, int]:
    """Mean (bot score - random score) and bot wins, the bot alternating seats."""
    game = make_game(game_id, **options)
    rng = random.Random(2024)
    margin, wins = 0.0, 0
    for seed in range(games):
        game.reset(seed)
        bot = seed % 2
        while not game.is_over():
            player = game.to_act()[0]
            move = game.bot_move(player, rng) if player == bot else game.random_move(player, rng)
            assert game.step(player, move).valid
        out = game.outcome()
        margin += out.scores[bot] - out.scores[1 - bot]
        wins += out.ranks[bot] < out.ranks[1 - bot]
    return margin / games, wins


def bot_first_places(game_id: str, players: int, games: int = 30) -> int:
    """How many of `games` seeded matches the bot (seat 0) finishes first against random players,
    played through the match driver."""
    wins = 0
    for seed in range(games):
        seats = [make_policy("bot")] + [make_policy("random") for _ in range(players - 1)]
        record = asyncio.run(play_match(make_game(game_id, players), seats, seed=seed))
        wins += record.outcome["ranks"][0] == 1
    return wins
