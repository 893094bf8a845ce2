"""How a rating reads beside its interval, the same in the CLI and on the web.

TrueSkill's rating is the conservative mu - 3 sigma: a lower bound, with no interval of its own.
Its 95% interval (mu -/+ 1.96 sigma) is mu's, so printed beside the conservative number it lay
wholly above it. Each number is therefore shown with the interval of that same number: mu with
its interval, and the conservative rating (which orders the table) in a column of its own.
Bradley-Terry's interval comes from a bootstrap that is not always run, and Elo has none: where
an interval is missing, say why. Ranks respect the intervals, so a shared rank says why as well.
"""

from __future__ import annotations

from typing import Protocol, Sequence

MIN_BOOTSTRAP_MATCHES = 2  # league.ratings.leaderboard resamples only from this many rated matches


class RatedRow(Protocol):
    policy: str
    rating: float
    lo: float
    hi: float
    rank: int


def estimate(system: str, rating: float, lo: float, hi: float) -> float:
    """The number whose 95% interval is [lo, hi]: TrueSkill's mu (the interval's middle), else the rating."""
    return (lo + hi) / 2 if system == "trueskill" else rating


def has_interval(lo: float, hi: float) -> bool:
    return hi > lo


def missing_interval_reason(system: str, *, bootstrap: int | None = None, rated_matches: int | None = None) -> str:
    """Why a row shows no 95% interval, in words a reader can act on."""
    if system == "elo":
        return "Elo has no interval (a running score); its rank is plain order"
    if system == "bt":
        if bootstrap == 0:
            return "no 95% CI: the bootstrap was switched off (--bootstrap 0)"
        if rated_matches is not None and rated_matches < MIN_BOOTSTRAP_MATCHES:
            return f"no 95% CI: a bootstrap needs at least {MIN_BOOTSTRAP_MATCHES} rated matches"
        return "no 95% CI yet: Bradley-Terry intervals are bootstrapped at the league's last snapshot (arena league rerate)"
    return "no 95% CI: no rated game yet"


def rank_ties(rows: Sequence[RatedRow], system: str) -> list[str]:
    """One sentence per rank that several policies share, saying why they share it."""
    by_rank: dict[int, list[str]] = {}
    for row in rows:
        by_rank.setdefault(row.rank, []).append(row.policy)
    notes = []
    for rank, names in sorted(by_rank.items()):
        if len(names) < 2:
            continue
        who = ", ".join(names)
        if system == "elo":
            notes.append(f"rank {rank} is shared by {who}: equal Elo ratings")
        else:
            notes.append(
                f"rank {rank} is shared by {who}: their 95% CIs overlap, so the matches so far do not "
                "separate them (more games narrow the intervals)"
            )
    return notes
