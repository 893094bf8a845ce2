"""Rating snapshots: the leaderboard after every k-th finished match, derived from the log.

They feed the web's rating-over-time charts and let it serve standings without recomputing
them per request. `rerate` throws a league's snapshots away and rebuilds them from the match
log in one transaction, so they can never drift from it.
"""

from __future__ import annotations

import math
from typing import Any

from league.ratings import SYSTEMS, leaderboard
from league.store import Store

CHECKPOINTS = 20  # points per rating curve
FINAL_BOOTSTRAP = 200  # confidence intervals at the last point (as `arena leaderboard` shows)


def checkpoints(total: int, count: int = CHECKPOINTS) -> list[int]:
    """Every ceil(total/count)-th match, and the last one."""
    if total <= 0:
        return []
    step = max(1, math.ceil(total / count))
    return sorted(set(range(step, total + 1, step)) | {total})


def snapshot_rows(results: list, games: list[str]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for game in [None, *games]:
        scoped = [r for r in results if game is None or r.game_id == game]
        for after in checkpoints(len(scoped)):
            final = after == len(scoped)
            for system in SYSTEMS:
                # Earlier points skip the bootstrap (their CIs would cost 200 fits each).
                board = leaderboard(scoped[:after], by=system, bootstrap=FINAL_BOOTSTRAP if final else 0)
                rows += [
                    {
                        "game_id": game or "", "system": system, "after_matches": after, "policy": row.policy,
                        "rating": float(row.rating), "lo": float(row.lo), "hi": float(row.hi), "rank": int(row.rank),
                        "games": int(row.games),
                    }
                    for row in board
                ]
    return rows


def rerate(store: Store, league_id: int) -> int:
    """Recompute every snapshot of a league from its finished matches; returns the row count."""
    results = store.results(league_id)
    rows = snapshot_rows(results, sorted({r.game_id for r in results}))
    store.replace_snapshots(league_id, rows)
    return len(rows)
