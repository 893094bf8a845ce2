"""`--seed` replays a whole match: each policy's sampling seed derives from the match seed and its
seat (arena.seeding) unless its spec sets one, never from the per-run match id."""

from __future__ import annotations

import pytest

from arena.game import Observation
from arena.match import play_match
from arena.policy import MoveRequest, make_policy
from arena.seeding import move_seed, seat_seed
from games.registry import make_game


def _request(player=0, turn=0, attempt=0, match_seed=5, match_id="m1"):
    obs = Observation(player=player, text="board", legal_moves=["0", "4"], turn=turn)
    return MoveRequest(game_id="g", game_name="G", rules="r", observation=obs, attempt=attempt, match_id=match_id, match_seed=match_seed)


def test_seeds_derive_from_match_seed_seat_turn_and_attempt():
    assert seat_seed(5, 0) == seat_seed(5, 0) != seat_seed(5, 1) != seat_seed(6, 1)
    base = move_seed(None, _request())
    assert base == move_seed(None, _request(match_id="another run"))  # the match id plays no part
    others = [_request(player=1), _request(turn=1), _request(attempt=1), _request(match_seed=6)]
    assert len({base, *(move_seed(None, r) for r in others)}) == 5
    # a spec's own seed replaces the seat's
    assert move_seed(7, _request()) == move_seed(7, _request()) != base
    assert 0 <= base < 2**31


async def _moves(specs, seed):
    game = make_game("tictactoe")
    record = await play_match(game, [make_policy(s) for s in specs], seed)
    return [(t.player, t.raw, t.action) for t in record.turns]


async def test_random_replays_with_the_same_match_seed():
    specs = ["random", "random"]
    first = await _moves(specs, 3)
    assert first == await _moves(specs, 3)  # each play_match makes a fresh match id
    assert [await _moves(specs, s) for s in (4, 5, 6)] != [first] * 3
    # a spec's own seed changes that seat's play (and replays too)
    seeded = [await _moves(["random,seed=9", "random"], s) for s in (3, 4, 5)]
    assert seeded == [await _moves(["random,seed=9", "random"], s) for s in (3, 4, 5)]
    assert seeded != [await _moves(specs, s) for s in (3, 4, 5)]


@pytest.mark.slow
async def test_a_local_model_replays_with_the_same_match_seed():
    """Same requests in the same batch shape (one match at a time) reproduce exactly."""
    specs = ["local,temperature=1.0,max_new_tokens=12", "random"]
    first = await _moves(specs, 2)
    assert first == await _moves(specs, 2)
    assert await _moves(specs, 7) != first
