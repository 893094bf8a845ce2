"""JSONL exports of stored matches: raw records, SFT chats and DPO pairs in the formats TRL's
SFTTrainer and DPOTrainer read (conversational: lists of {"role", "content"} messages)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterator

from arena.match import MatchRecord
from league.store import Store


def _records(store: Store, league_id: int | None) -> Iterator[MatchRecord]:
    for match_id in store.match_ids(league_id):
        yield store.match_record(match_id)


def _write(out: Path, rows: Iterator[dict]) -> int:
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def export_records(store: Store, league_id: int | None, out: Path) -> int:
    return _write(out, (record.to_dict() for record in _records(store, league_id)))


def _winners(record: MatchRecord) -> set[int]:
    ranks = (record.outcome or {}).get("ranks", [])
    if not ranks or len(set(ranks)) == 1:
        return set()  # a draw teaches nothing about which replies were better
    return {seat for seat, rank in enumerate(ranks) if rank == 1}


def export_sft(store: Store, league_id: int | None, out: Path) -> int:
    """Each valid turn of a winning seat as one chat: the observation it saw, the reply it wrote."""

    def rows():
        for record in _records(store, league_id):
            winners = _winners(record)
            for turn in record.turns:
                if turn.player in winners and turn.valid and turn.raw:
                    yield {
                        "messages": [
                            {"role": "user", "content": turn.observation},
                            {"role": "assistant", "content": turn.raw},
                        ],
                        "game_id": record.game_id,
                        "match_id": record.match_id,
                    }

    return _write(out, rows())


def export_dpo(store: Store, league_id: int | None, out: Path) -> int:
    """Pairs at comparable states (same game, identical observation text): a winner's valid reply
    is chosen over a loser's reply or any invalid reply."""
    good: dict[tuple[str, str], list[str]] = defaultdict(list)
    bad: dict[tuple[str, str], list[str]] = defaultdict(list)
    for record in _records(store, league_id):
        winners = _winners(record)
        for turn in record.turns:
            if not turn.raw:
                continue
            state = (record.game_id, turn.observation)
            if turn.valid and turn.player in winners:
                good[state].append(turn.raw)
            elif not turn.valid or (winners and turn.player not in winners):
                bad[state].append(turn.raw)

    def rows():
        for state in sorted(set(good) & set(bad)):
            for chosen in sorted(set(good[state])):
                for rejected in sorted(set(bad[state]) - {chosen}):
                    yield {
                        "prompt": [{"role": "user", "content": state[1]}],
                        "chosen": [{"role": "assistant", "content": chosen}],
                        "rejected": [{"role": "assistant", "content": rejected}],
                        "game_id": state[0],
                    }

    return _write(out, rows())


EXPORTERS: dict[str, Callable[[Store, int | None, Path], int]] = {
    "records": export_records,
    "sft": export_sft,
    "dpo": export_dpo,
}
