"""JSONL exports of stored matches.

- records: one full MatchRecord per line (every turn: prompt text, raw reply, action, validity...).
- sft: TRL SFTTrainer's conversational format, `{"messages": [{"role", "content"}, ...]}`: each
  clean valid turn (`TurnRecord.clean`: not a lenient "mention" parse) of a winning seat (rank 1 in a decisive match) as system (the game's rules) + user
  (the observation that seat saw) + assistant (the reply it wrote).
- dpo: TRL DPOTrainer's conversational preference format, `{"prompt": [...], "chosen": [...],
  "rejected": [...]}`: at comparable states (same game, identical observation text) a winner's
  clean valid reply is chosen over a loser's reply or any invalid or unclean reply. A reply seen on both sides at
  one state is dropped (it cannot be both better and worse).
- battles: LMArena's battle format, one row per pairwise result (league/battles.py).
- leaderboard: one row per policy, best first: its rating (one system), results and the per-move
  columns of league/move_stats.py under the names the web's JSON API gives them.
Extra keys (game_id, match_id, ...) ride along; TRL ignores columns it does not use.
Policies may record the exact chat they sent in `TurnRecord.meta["messages"]`; when present it
is used as the prompt instead of the rules + observation.
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from arena.match import MatchRecord, TurnRecord
from league.battles import battle_rows
from league.move_stats import MoveStats, move_stats
from league.store import Store

MAX_PAIRS_PER_STATE = 8  # bounds the cross product at very common states (an opening position)


def write_jsonl(out: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write to a temporary file and rename, so a failed export never leaves half a file."""
    tmp = out.with_name(out.name + ".partial")
    count = 0
    with tmp.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(out)
    return count


def export_records(store: Store, out: Path, *, league_id: int | None = None, game: str | None = None) -> int:
    return write_jsonl(out, (record.to_dict() for record in store.iter_records(league_id, game)))


def winners(record: MatchRecord) -> set[int]:
    """Seats ranked first in a decisive match; a full draw teaches nothing about better replies."""
    ranks = (record.outcome or {}).get("ranks") or []
    if not ranks or len(set(ranks)) == 1:
        return set()
    best = min(ranks)
    return {seat for seat, rank in enumerate(ranks) if rank == best}


@lru_cache(maxsize=256)
def _rules(game_id: str, num_players: int) -> str:
    from games.registry import make_game

    try:
        return make_game(game_id, num_players).rules
    except Exception:  # noqa: BLE001 - a game removed since the match was played: no system turn
        return ""


def prompt_messages(record: MatchRecord, turn: TurnRecord) -> list[dict[str, str]]:
    """The chat a policy answered at this turn."""
    recorded = turn.meta.get("messages") if isinstance(turn.meta, dict) else None
    if isinstance(recorded, list) and recorded and all(isinstance(m, dict) and {"role", "content"} <= set(m) for m in recorded):
        return [{"role": str(m["role"]), "content": str(m["content"])} for m in recorded]
    rules = _rules(record.game_id, record.num_players)
    system = [{"role": "system", "content": rules}] if rules else []
    return system + [{"role": "user", "content": turn.observation}]


def sft_rows(records: Iterable[MatchRecord]) -> Iterator[dict[str, Any]]:
    for record in records:
        best = winners(record)
        for turn in record.turns:
            if turn.player in best and turn.clean and turn.raw.strip():
                yield {
                    "messages": prompt_messages(record, turn) + [{"role": "assistant", "content": turn.raw}],
                    "game_id": record.game_id, "match_id": record.match_id, "policy": turn.policy, "turn": turn.turn,
                }


def export_sft(store: Store, out: Path, *, league_id: int | None = None, game: str | None = None) -> int:
    return write_jsonl(out, sft_rows(store.iter_records(league_id, game)))


def dpo_rows(records: Iterable[MatchRecord]) -> Iterator[dict[str, Any]]:
    good: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)  # dicts keep first-seen order
    bad: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)
    prompts: dict[tuple[str, str], list[dict[str, str]]] = {}
    for record in records:
        best = winners(record)
        for turn in record.turns:
            if not turn.raw.strip():
                continue  # a timeout or outage wrote nothing to prefer or reject
            state = (record.game_id, turn.observation)
            if turn.clean and turn.player in best:
                good[state][turn.raw] = None
            elif not turn.clean or (best and turn.player not in best):
                bad[state][turn.raw] = None
            else:
                continue
            prompts.setdefault(state, prompt_messages(record, turn))
    for state in sorted(set(good) & set(bad)):
        both = set(good[state]) & set(bad[state])
        chosen = [r for r in good[state] if r not in both]
        rejected = [r for r in bad[state] if r not in both]
        pairs = [(c, r) for c in chosen for r in rejected][:MAX_PAIRS_PER_STATE]
        for chosen_reply, rejected_reply in pairs:
            yield {
                "prompt": prompts[state],
                "chosen": [{"role": "assistant", "content": chosen_reply}],
                "rejected": [{"role": "assistant", "content": rejected_reply}],
                "game_id": state[0],
            }


def export_dpo(store: Store, out: Path, *, league_id: int | None = None, game: str | None = None) -> int:
    return write_jsonl(out, dpo_rows(store.iter_records(league_id, game)))


def export_battles(store: Store, out: Path, *, league_id: int | None = None, game: str | None = None) -> int:
    return write_jsonl(out, battle_rows(store.results(league_id, game)))


def leaderboard_rows(store: Store, *, league_id: int | None = None, game: str | None = None, by: str = "trueskill") -> list[dict[str, Any]]:
    """The standings `arena leaderboard --by BY` prints (Bradley-Terry with its bootstrap interval)
    with every per-move column, as JSON-ready rows."""
    from league.ratings import leaderboard
    from league.snapshots import FINAL_BOOTSTRAP

    board = leaderboard(store.results(league_id, game), by=by, game=game, bootstrap=FINAL_BOOTSTRAP)
    with store.session() as session:
        stats = move_stats(session, league_id, game).get(game or "", {})
    return [
        {"system": by, "game": game or "", "rank": row.rank, "policy": row.policy, "rating": row.rating, "lo": row.lo, "hi": row.hi,
         "games": row.games, "wins": row.wins, "draws": row.draws, "losses": row.losses,
         **(stats.get(row.policy) or MoveStats(row.policy)).columns()}
        for row in board
    ]


def export_leaderboard(store: Store, out: Path, *, league_id: int | None = None, game: str | None = None, by: str = "trueskill") -> int:
    return write_jsonl(out, leaderboard_rows(store, league_id=league_id, game=game, by=by))


EXPORTERS: dict[str, Callable[..., int]] = {
    "records": export_records,
    "sft": export_sft,
    "dpo": export_dpo,
    "battles": export_battles,
    "leaderboard": export_leaderboard,
}
RATED_EXPORTS = ("leaderboard",)  # kinds that take --by
