"""Rating snapshots: the leaderboard after every k-th finished match, derived from the log.

They feed the rating-over-time charts and let the web serve standings without recomputing them
per request. `rerate` throws the old snapshots away and rebuilds them, so they can never drift
from the match log.
"""

from __future__ import annotations

from league.ratings import SYSTEMS, leaderboard
from league.store import RatingSnapshotRow, Store

CHECKPOINTS = 20  # snapshots per rating curve
FINAL_BOOTSTRAP = 200  # confidence intervals at the last checkpoint; earlier ones are points


def checkpoints(total: int, count: int = CHECKPOINTS) -> list[int]:
    if total <= 0:
        return []
    return sorted({max(1, round(total * (i + 1) / count)) for i in range(count)} | {total})


def rerate(store: Store, league_id: int) -> int:
    results = store.results(league_id)
    games = sorted({r.game_id for r in results})
    rows: list[RatingSnapshotRow] = []
    for game in [None, *games]:
        scoped = [r for r in results if game is None or r.game_id == game]
        for after in checkpoints(len(scoped)):
            final = after == len(scoped)
            for system in SYSTEMS:
                board = leaderboard(scoped[:after], by=system, bootstrap=FINAL_BOOTSTRAP if final else 0)
                rows += [
                    RatingSnapshotRow(
                        league_id=league_id, game_id=game or "", system=system, after_matches=after,
                        policy=row.policy, rating=row.rating, lo=row.lo, hi=row.hi, rank=row.rank,
                    )
                    for row in board
                ]
    store.replace_snapshots(league_id, rows)
    return len(rows)
