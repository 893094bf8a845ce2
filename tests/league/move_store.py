"""A league store with hand-written turns whose per-move figures are known, for the leaderboard's
per-move columns (league/move_stats.py) in the terminal, the export and the web.

- "thinker", a reasoning model: turns record reasoning and answer tokens and a cost, one reply is
  invalid, one only a lenient parse found, one cost is unknown, and in nim it times out and forfeits;
- "legacy": turns as stores wrote them before reasoning was counted (token columns, no reasoning
  meta; one meta holds a non-number under `reasoning_tokens`), and it forfeits a tic-tac-toe match;
- "bot": a scripted policy, no tokens, no cost;
- a second league "other" whose match must not count in "lab"'s figures.
"""

from __future__ import annotations

from typing import Any

from arena.match import MatchRecord, TurnRecord
from league.scheduling import Pairing
from league.store import Store

# What "lab" holds, worked out by hand from the turns below (over all games, then per game).
EXPECTED: dict[str, dict[str, Any]] = {
    "thinker": {
        "moves": 4, "invalid_rate": 3 / 4, "failures": 1, "matches": 2, "forfeits": 1, "forfeit_rate": 1 / 2,
        "prompt_tokens_per_move": 300 / 3, "completion_tokens_per_move": 100 / 3, "reasoning_tokens_per_move": 60 / 3,
        "answer_tokens_per_move": 40 / 3, "reasoning_moves": 3, "cost_per_move_usd": 0.003 / 2, "cost_usd": 0.003,
        "cost_moves": 2, "median_move_s": (2.0 + 3.0) / 2,
    },
    "legacy": {
        "moves": 2, "invalid_rate": 1 / 2, "failures": 0, "matches": 2, "forfeits": 1, "forfeit_rate": 1 / 2,
        "prompt_tokens_per_move": 100 / 2, "completion_tokens_per_move": 20 / 2, "reasoning_tokens_per_move": None,
        "answer_tokens_per_move": None, "reasoning_moves": 0, "cost_per_move_usd": None, "cost_usd": None,
        "cost_moves": 0, "median_move_s": (4.0 + 5.0) / 2,
    },
    "bot": {
        "moves": 2, "invalid_rate": 0.0, "failures": 0, "matches": 2, "forfeits": 0, "forfeit_rate": 0.0,
        "prompt_tokens_per_move": None, "completion_tokens_per_move": None, "reasoning_tokens_per_move": None,
        "answer_tokens_per_move": None, "reasoning_moves": 0, "cost_per_move_usd": None, "cost_usd": None,
        "cost_moves": 0, "median_move_s": (0.001 + 0.002) / 2,
    },
}
EXPECTED_TICTACTOE = {
    "thinker": {"moves": 3, "invalid_rate": 2 / 3, "matches": 1, "forfeits": 0, "median_move_s": 2.0},
    "legacy": {"moves": 1, "matches": 1, "forfeits": 1, "forfeit_rate": 1.0, "median_move_s": 5.0},
}


def turn(index: int, player: int, policy: str, *, valid: bool = True, **fields: Any) -> TurnRecord:
    return TurnRecord(index=index, player=player, policy=policy, turn=index, attempt=0, observation="board",
                      legal_moves=None, raw="reply", action="move", valid=valid, **fields)


def thinking(reasoning: int, answer: int) -> dict[str, Any]:
    """A turn's meta as the LLM policies write it since reasoning is counted apart."""
    return {"parse": "strict", "reasoning_tokens": reasoning, "answer_tokens": answer}


def finish_match(store: Store, league: str, key: str, game: str, seats: tuple[str, str], ranks: list[int], turns: list[TurnRecord]) -> None:
    league_id = store.open_league(league)
    store.schedule(league_id, [Pairing(key, game, seats, 0)])
    record = MatchRecord(match_id=key, game_id=game, num_players=2, seed=0, policies=list(seats), specs=list(seats),
                         turns=turns, outcome={"scores": [1.0, -1.0], "ranks": ranks, "reason": "test"}, status="finished")
    assert store.finish(league_id, key, record) is not None


def fill(store: Store, thinker: str = "thinker") -> None:
    """Write the matches; `thinker` renames the reasoning model (a hostile name for the web)."""
    finish_match(store, "lab", "m1", "tictactoe", (thinker, "bot"), [1, 2], [
        turn(0, 0, thinker, prompt_tokens=100, completion_tokens=50, cost_usd=0.002, latency_s=1.0, meta=thinking(40, 10)),
        turn(1, 1, "bot", latency_s=0.001),
        turn(2, 0, thinker, valid=False, prompt_tokens=120, completion_tokens=30, cost_usd=0.001, latency_s=3.0, meta=thinking(20, 10)),
        turn(3, 0, thinker, prompt_tokens=80, completion_tokens=20, latency_s=2.0, meta={**thinking(0, 20), "parse": "mention"}),
    ])
    finish_match(store, "lab", "m2", "tictactoe", ("bot", "legacy"), [1, 2], [
        turn(0, 0, "bot", latency_s=0.002),
        turn(1, 1, "legacy", valid=False, penalty="forfeit", prompt_tokens=60, completion_tokens=12, latency_s=5.0, meta={}),
    ])
    finish_match(store, "lab", "m3", "nim", ("legacy", thinker), [1, 2], [
        turn(0, 0, "legacy", prompt_tokens=40, completion_tokens=8, latency_s=4.0, meta={"reasoning_tokens": "lots"}),
        turn(1, 1, thinker, valid=False, penalty="forfeit", error="timeout after 30s", latency_s=30.0),
    ])
    finish_match(store, "other", "o1", "tictactoe", (thinker, "bot"), [2, 1], [
        turn(0, 0, thinker, valid=False, penalty="forfeit", prompt_tokens=9, completion_tokens=9, cost_usd=5.0, latency_s=99.0, meta=thinking(9, 0)),
    ])
