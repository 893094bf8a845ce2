"""The conformance checks every game must pass (after PettingZoo's api_test and seed_test).

Shipped in the package, like PettingZoo's api_test, so the author of a new game can check it the
way every built-in game is checked (docs/games.md): register the game, then
    from games.conformance import check_all; check_all("my_game")
Each check is a plain function that raises AssertionError (or GameError) naming the game and what
it broke; it needs only the game API and the registry, so nothing here imports the layers above.
"""

from __future__ import annotations

import json
import random
from typing import Any

from arena.game import Game, GameError
from games.registry import make_game

MAX_STEPS = 20_000


def playout(game: Game, seed: int, move_seed: int, until: int | None = None) -> list[tuple[int, str]]:
    """Random play from reset(seed); returns the (player, action) list. Stops at `until` steps."""
    game.reset(seed)
    rng = random.Random(move_seed)
    moves: list[tuple[int, str]] = []
    while not game.is_over():
        if until is not None and len(moves) >= until:
            break
        assert len(moves) < MAX_STEPS, f"{game.id}: random play did not end within {MAX_STEPS} steps"
        to_act = game.to_act()
        assert to_act, f"{game.id}: nobody to act but the game is not over"
        player = to_act[0]
        action = game.random_move(player, rng)
        result = game.step(player, action)
        assert result.valid, f"{game.id}: its own random_move {action!r} was rejected: {result.feedback}"
        moves.append((player, action))
    return moves


def trace(game: Game) -> list[Any]:
    """Everything observable now, for comparisons."""
    views = []
    for p in range(game.num_players):
        obs = game.observe(p)
        views.append((obs.text, obs.legal_moves, obs.turn))
    out = game.outcome().to_dict() if game.is_over() else None
    return [game.to_act(), views, out]


def replay(game: Game, seed: int, moves: list[tuple[int, str]]) -> None:
    game.reset(seed)
    for player, action in moves:
        assert game.step(player, action).valid


def check_determinism(game_id: str, num_players: int | None = None, seeds: range = range(5)) -> None:
    for seed in seeds:
        a, b = make_game(game_id, num_players), make_game(game_id, num_players)
        moves_a = playout(a, seed, move_seed=seed)
        moves_b = playout(b, seed, move_seed=seed)
        assert moves_a == moves_b, f"{game_id}: same seeds gave different plays"
        assert trace(a) == trace(b), f"{game_id}: same seeds gave different observations or outcome"


def check_terminates_and_outcome(game_id: str, num_players: int | None = None, games: int = 20) -> None:
    game = make_game(game_id, num_players)
    n = game.num_players
    for seed in range(games):
        playout(game, seed, move_seed=1000 + seed)
        assert game.is_over() and game.to_act() == []
        out = game.outcome()
        assert len(out.scores) == n and len(out.ranks) == n, f"{game_id}: outcome not per player"
        assert all(1 <= r <= n for r in out.ranks) and min(out.ranks) == 1, f"{game_id}: bad ranks {out.ranks}"
        for p in range(n):
            for q in range(n):
                if out.scores[p] > out.scores[q]:
                    assert out.ranks[p] < out.ranks[q], f"{game_id}: ranks disagree with scores {out}"
        assert out.reason, f"{game_id}: outcome has no reason"
        json.dumps(out.to_dict())


def check_legal_moves_accepted(game_id: str, num_players: int | None = None, games: int = 5, per_state: int = 8) -> None:
    game = make_game(game_id, num_players)
    probe = make_game(game_id, num_players)
    for seed in range(games):
        game.reset(seed)
        rng = random.Random(seed)
        while not game.is_over():
            player = game.to_act()[0]
            legal = game.legal_moves(player)
            if legal:
                assert len(set(legal)) == len(legal), f"{game_id}: duplicate legal moves {legal}"
                state = game.get_state()
                for move in rng.sample(legal, min(per_state, len(legal))):
                    probe.set_state(state)
                    result = probe.step(player, move)
                    assert result.valid, f"{game_id}: legal move {move!r} rejected: {result.feedback}"
            game.step(player, game.random_move(player, rng))


HOSTILE_INPUTS = ("", " ", "9" * 5000, "-1", "[]", "[[[", "\x00", "{}", "1e309", "NaN", "\u202e\u0000", "x" * 20000)


def check_invalid_moves(game_id: str, num_players: int | None = None) -> None:
    """Junk gets feedback and a retry; past the allowance the declared rule applies.
    Hostile text (huge numbers, control characters, empty) is rejected, never crashes the game."""
    game = make_game(game_id, num_players)
    for text in HOSTILE_INPUTS:
        game.reset(3)
        player = game.to_act()[0]
        result = game.step(player, text)  # must not raise; free-text games may accept some
        assert isinstance(result.valid, bool)
    game.reset(7)
    player = game.to_act()[0]
    junk = "\u2603 definitely not a move \u2603"
    free_text = game.legal_moves(player) is None
    first = game.step(player, junk)
    if free_text and first.valid:
        pass  # a free-text game (chat, negotiation) may take any message as a move
    else:
        assert not first.valid and first.feedback, f"{game_id}: junk accepted or no feedback"
    if not first.valid and first.penalty is None:
        assert player in game.to_act(), f"{game_id}: turn passed after one invalid move"
        assert game.observe(player).feedback, f"{game_id}: the retry does not show the feedback"
    if not first.valid and first.penalty is None:
        for _ in range(50):
            if game.is_over() or player not in game.to_act():
                break
            result = game.step(player, junk)
            assert not result.valid
            if result.penalty:
                break
        else:
            raise AssertionError(f"{game_id}: invalid moves never triggered the rule")
    # fail() applies the rule at once
    game.reset(8)
    player = game.to_act()[0]
    result = game.fail(player, "provider outage")
    assert result.penalty, f"{game_id}: fail() did not apply the invalid-move rule"


def check_state_roundtrip(game_id: str, num_players: int | None = None, games: int = 5) -> None:
    for seed in range(games):
        game = make_game(game_id, num_players)
        moves = playout(game, seed, move_seed=seed)
        cut = random.Random(seed).randint(0, len(moves))
        game.reset(seed)
        for player, action in moves[:cut]:
            game.step(player, action)
        state = json.loads(json.dumps(game.get_state()))
        clone = make_game(game_id, num_players)
        clone.reset(seed + 12345)  # different seed: everything must come from the state
        clone.set_state(state)
        assert trace(clone) == trace(game), f"{game_id}: restored state looks different"
        assert clone.get_state() == state, f"{game_id}: get_state(set_state(s)) != s"
        for player, action in moves[cut:]:
            assert clone.step(player, action).valid, f"{game_id}: restored game rejected a move"
            game.step(player, action)
        assert trace(clone) == trace(game), f"{game_id}: restored game diverged"
        # chance after a restore must continue identically too (dice, shuffles)
        rng_a, rng_b = random.Random(1), random.Random(1)
        if not game.is_over():
            p = game.to_act()[0]
            assert game.random_move(p, rng_a) == clone.random_move(p, rng_b)


def check_no_private_leaks(game_id: str, num_players: int | None = None, games: int = 10) -> None:
    """A player's secrets (as the game declares them) appear in its own view and nobody else's."""
    game = make_game(game_id, num_players)
    for seed in range(games):
        game.reset(seed)
        rng = random.Random(seed)
        while not game.is_over():
            for owner in range(game.num_players):
                for secret in game.secrets(owner):
                    assert secret in game.observe(owner).text, f"{game_id}: secret {secret!r} not in its owner's view"
                    for other in range(game.num_players):
                        if other != owner:
                            assert secret not in game.observe(other).text, (
                                f"{game_id}: player {other} can see player {owner}'s secret {secret!r}"
                            )
            player = game.to_act()[0]
            game.step(player, game.random_move(player, rng))


def check_bot(game_id: str, num_players: int | None = None, games: int = 5) -> None:
    game = make_game(game_id, num_players)
    for seed in range(games):
        game.reset(seed)
        rng = random.Random(seed)
        steps = 0
        while not game.is_over() and steps < MAX_STEPS:
            player = game.to_act()[0]
            move = game.bot_move(player, rng)
            result = game.step(player, move)
            assert result.valid, f"{game_id}: the bot's move {move!r} was rejected: {result.feedback}"
            steps += 1
        assert game.is_over()


def check_wrong_player(game_id: str, num_players: int | None = None) -> None:
    game = make_game(game_id, num_players)
    game.reset(0)
    if game.simultaneous:
        return
    waiting = [p for p in range(game.num_players) if p not in game.to_act()]
    if waiting:
        try:
            game.step(waiting[0], "x")
        except GameError:
            return
        raise AssertionError(f"{game_id}: a player moved out of turn")


ALL_CHECKS = (
    check_determinism,
    check_terminates_and_outcome,
    check_legal_moves_accepted,
    check_invalid_moves,
    check_state_roundtrip,
    check_no_private_leaks,
    check_bot,
    check_wrong_player,
)


def check_all(game_id: str, num_players: int | None = None) -> None:
    for check in ALL_CHECKS:
        check(game_id, num_players)
