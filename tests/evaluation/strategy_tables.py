"""Shared by the exploitability tests: a fixed, irregular strategy both our tree and OpenSpiel's
can be given, keyed by what a player knows (own rank, public board rank, public actions)."""

from __future__ import annotations

import hashlib

Canonical = tuple  # (player, own rank, board rank or -1, actions with "|" between rounds)


def hashed_distribution(canonical: Canonical, moves: list[str]) -> dict[str, float]:
    """Deterministic, uneven probabilities (no move at 0 or 1) from the decision's description."""
    weights = []
    for move in moves:
        digest = hashlib.sha256(repr((canonical, move)).encode()).digest()
        weights.append(1 + digest[0] % 7)
    total = sum(weights)
    return {move: w / total for move, w in zip(moves, weights)}


def our_canonical(state: dict, player: int) -> Canonical:
    """From a kuhn_poker or leduc_holdem state dict (one hand)."""
    board = state.get("board", -1) if state.get("betting_round", 0) == 1 else -1
    earlier = tuple(state.get("earlier_actions", ()))
    actions = (earlier + ("|",) if state.get("betting_round", 0) == 1 else ()) + tuple(state["actions"])
    return (player, state["cards"][player], board, actions)
