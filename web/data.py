"""What the pages and the API show, assembled from web/queries.py, with the expensive aggregates
cached per data version.

A league's aggregates (per-policy W/D/L and move statistics, head-to-head tables) are recomputed
only when a match of that league becomes final or its snapshots are rewritten (queries.data_version),
and that version is looked up at most once every `refresh_s` seconds per league, so a busy
leaderboard costs no database work at all between changes. Standings always come from the stored
rating snapshots; only a league without any snapshot yet falls back to fitting the ratings from
its log (cached the same way).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from arena.redaction import redact
from league.ratings import SYSTEMS, leaderboard
from league.store import Store
from web import queries as q
from web import runs as training_runs

SYSTEM_LABELS = {"trueskill": "TrueSkill (mu - 3 sigma)", "elo": "Elo", "bt": "Bradley-Terry (Elo scale)"}
FALLBACK_BOOTSTRAP_LIMIT = 5000  # above this many matches a no-snapshot fallback skips the BT bootstrap


class NotFound(LookupError):
    """Something the URL names does not exist (one line, shown to the user)."""


@dataclass
class LeaderboardRow:
    rank: int
    policy: str
    rating: float
    lo: float
    hi: float
    games: int
    wins: int
    draws: int
    losses: int
    matches: int
    invalid_rate: float | None
    avg_tokens: float | None  # prompt + generated tokens per attempt that reported either
    avg_latency_ms: float | None  # the mean; median_move_s is the column the page shows
    failures: int
    last_played: str | None
    # the per-move columns of league.move_stats (MoveStats.columns), under the same names there
    moves: int
    forfeits: int
    forfeit_rate: float | None
    prompt_tokens_per_move: float | None
    reasoning_tokens_per_move: float | None
    answer_tokens_per_move: float | None
    completion_tokens_per_move: float | None
    reasoning_moves: int
    cost_per_move_usd: float | None
    cost_usd: float | None
    cost_moves: int
    median_move_s: float | None


class _Cache:
    """league -> (version, {key: value}); the version is re-read at most every `refresh_s`."""

    def __init__(self, refresh_s: float) -> None:
        self.refresh_s = refresh_s
        self.lock = threading.Lock()
        self.versions: dict[int, tuple[Any, float]] = {}
        self.values: dict[tuple[int, Any], tuple[Any, Any]] = {}
        self.key_locks: dict[tuple[int, Any], threading.Lock] = {}

    def version(self, league_id: int, read: Callable[[], Any]) -> Any:
        now = time.monotonic()
        known = self.versions.get(league_id)
        if known is not None and now - known[1] < self.refresh_s:
            return known[0]
        version = read()
        self.versions[league_id] = (version, now)
        return version

    def get(self, league_id: int, key: Any, version: Any, compute: Callable[[], Any]) -> Any:
        hit = self.values.get((league_id, key))
        if hit is not None and hit[0] == version:
            return hit[1]
        # Single flight: when the data changes under 32 waiting clients, one of them recomputes
        # and the others wait for its answer instead of each running the same aggregate.
        with self.lock:
            key_lock = self.key_locks.setdefault((league_id, key), threading.Lock())
        with key_lock:
            hit = self.values.get((league_id, key))
            if hit is not None and hit[0] == version:
                return hit[1]
            value = compute()
            self.values[(league_id, key)] = (version, value)
            return value

    def is_fresh(self, league_id: int) -> bool:
        known = self.versions.get(league_id)
        return known is not None and time.monotonic() - known[1] < self.refresh_s


class WebData:
    def __init__(self, store: Store, refresh_s: float = 2.0) -> None:
        self.store = store
        self.cache = _Cache(refresh_s)
        self._leagues: dict[str, tuple[tuple[int, str], float]] = {}  # name ("" = newest) -> ((id, name), when)
        self._runs: dict[str, tuple[Any, training_runs.RunDetail]] = {}  # run -> (version, detail)
        self._runs_lock = threading.Lock()

    # ---- leagues --------------------------------------------------------------------------------
    def league(self, name: str | None) -> tuple[int, str]:
        """(id, name) of the named league, or of the newest one."""
        hit = self._leagues.get(name or "")
        if hit is not None and time.monotonic() - hit[1] < self.cache.refresh_s:
            return hit[0]
        with self.store.session() as s:
            row = q.league_by_name(s, name)
            if row is None:
                if name:
                    raise NotFound(f"no league named {name!r}")
                raise NotFound("the store holds no league yet: run `arena league run` first")
            found = (row.id, row.name)
        self._leagues[name or ""] = (found, time.monotonic())
        return found

    def peek(self, league: str | None, key: Any) -> Any:
        """A cached value when it is known to be current without touching the database, else None
        (the caller then takes the slow path in a worker thread)."""
        hit = self._leagues.get(league or "")
        if hit is None or time.monotonic() - hit[1] >= self.cache.refresh_s:
            return None
        league_id = hit[0][0]
        if not self.cache.is_fresh(league_id):
            return None
        value = self.cache.values.get((league_id, key))
        if value is None or value[0] != self.cache.versions[league_id][0]:
            return None
        return value[1]

    def league_names(self) -> list[str]:
        with self.store.session() as s:
            return [row.name for row in q.leagues(s)]

    def version(self, league_id: int) -> Any:
        def read() -> Any:
            with self.store.session() as s:
                return q.data_version(s, league_id)

        return self.cache.version(league_id, read)

    def cached(self, league_id: int, key: Any, compute: Callable[[Any], Any]) -> Any:
        """`compute(session)` once per data version of the league."""
        def run() -> Any:
            with self.store.session() as s:
                return compute(s)

        return self.cache.get(league_id, key, self.version(league_id), run)

    def games(self, league_id: int) -> list[str]:
        return self.cached(league_id, "games", lambda s: q.league_games(s, league_id))

    def check_game(self, league_id: int, game: str | None) -> str:
        if game and game not in self.games(league_id):
            raise NotFound(f"no matches of game {game!r} in this league")
        return game or ""

    # ---- leaderboard ----------------------------------------------------------------------------
    def stats(self, league_id: int) -> dict[str, dict[str, q.PolicyStats]]:
        return self.cached(league_id, "stats", lambda s: q.policy_stats(s, league_id))

    def pairs(self, league_id: int) -> dict[str, dict[tuple[str, str], q.Pair]]:
        return self.cached(league_id, "pairs", lambda s: q.pair_stats(s, league_id))

    def standings(self, league_id: int, game: str, system: str, ci: str = "bootstrap", pooling: str = "games") -> tuple[list[q.Standing], bool]:
        """(rows best first, whether they come from stored snapshots). Snapshots hold the default
        Bradley-Terry (bootstrap CI, games pooled equally); other `ci`/`pooling` choices are
        fitted from the match log and cached until the log changes."""
        bt_choice = system == "bt" and (ci, pooling) != ("bootstrap", "games")

        def compute(s: Any) -> tuple[list[q.Standing], bool]:
            rows = [] if bt_choice else q.latest_standings(s, league_id, game, system)
            if rows:
                return rows, True
            results = self.store.results(league_id, game or None)
            boot = 200 if len(results) <= FALLBACK_BOOTSTRAP_LIMIT else 0
            options = {"ci": ci, "pooling": pooling} if system == "bt" else {}
            board = leaderboard(results, by=system, bootstrap=boot, **options)
            return [q.Standing(r.policy, r.rating, r.lo, r.hi, r.rank, r.games, len(results)) for r in board], False

        key = ("standings", game, system, ci, pooling) if bt_choice else ("standings", game, system)
        return self.cached(league_id, key, compute)

    def leaderboard(self, league_id: int, game: str, system: str, ci: str = "bootstrap", pooling: str = "games") -> tuple[list[LeaderboardRow], bool]:
        def build(_s: Any) -> tuple[list[LeaderboardRow], bool]:
            standings, from_snapshots = self.standings(league_id, game, system, ci, pooling)
            stats = self.stats(league_id).get(game, {})
            rows = []
            for st in standings:
                ps = stats.get(st.policy, q.PolicyStats(st.policy))
                rows.append(LeaderboardRow(
                    rank=st.rank, policy=st.policy, rating=st.rating, lo=st.lo, hi=st.hi, games=ps.games or st.games,
                    wins=ps.wins, draws=ps.draws, losses=ps.losses,
                    avg_tokens=ps.avg_tokens, avg_latency_ms=None if ps.avg_latency_s is None else ps.avg_latency_s * 1000.0,
                    last_played=ps.last_played.isoformat(timespec="seconds") if ps.last_played else None, **ps.columns(),
                ))
            return rows, from_snapshots

        key = ("leaderboard", game, system, ci, pooling) if (ci, pooling) != ("bootstrap", "games") else ("leaderboard", game, system)
        return self.cached(league_id, key, build)

    # ---- policies -------------------------------------------------------------------------------
    def policy(self, league_id: int, name: str, system: str) -> dict[str, Any]:
        stats = self.stats(league_id)
        if name not in stats.get("", {}):
            raise NotFound(f"policy {name!r} played no match in this league")
        with self.store.session() as s:
            row = q.policy_row(s, name)
            history = q.rating_history(s, league_id, name, system)
            recent = q.recent_matches_of(s, league_id, name)
        per_game = []
        for game in self.games(league_id):
            standing = next((st for st in self.standings(league_id, game, system)[0] if st.policy == name), None)
            game_stats = stats.get(game, {}).get(name)
            if standing is not None or game_stats is not None:
                per_game.append({"game": game, "standing": standing, "stats": game_stats})
        opponents = sorted(
            ((b, pair) for (a, b), pair in self.pairs(league_id)[""].items() if a == name),
            key=lambda item: (-item[1].games, item[0]),
        )
        return {
            "name": name, "spec": redact(row.spec) if row else "", "display_name": redact(row.display_name) if row else name,
            "stats": stats[""][name], "history": history, "per_game": per_game, "opponents": opponents, "recent": recent,
            "overall": next((st for st in self.standings(league_id, "", system)[0] if st.policy == name), None),
        }

    # ---- head to head ---------------------------------------------------------------------------
    def matrix(self, league_id: int, game: str, system: str) -> tuple[list[str], dict[tuple[str, str], q.Pair]]:
        """Policies in leaderboard order and the pair table of the scope."""
        table = self.pairs(league_id).get(game, {})
        order = [st.policy for st in self.standings(league_id, game, system)[0]]
        seen = set(order)
        order += sorted({a for a, _ in table} - seen)
        return order, table

    # ---- training runs ----------------------------------------------------------------------------
    def runs(self) -> list[training_runs.RunSummary]:
        return training_runs.list_runs(self.store)

    def run(self, name: str) -> training_runs.RunDetail:
        """A run's checkpoints and pooled ratings, refitted only when its evaluations change."""
        version = training_runs.run_version(self.store, name)
        with self._runs_lock:  # one fit at a time: a bootstrap is the expensive part
            hit = self._runs.get(name)
            if hit is not None and hit[0] == version:
                return hit[1]
            detail = training_runs.run_detail(self.store, name)
            if detail is None:
                raise NotFound(f"no training run named {name!r} (runs register checkpoints as RUN/step-K)")
            self._runs[name] = (version, detail)
            return detail

    # ---- live -----------------------------------------------------------------------------------
    def live(self, league_id: int, system: str = "trueskill") -> dict[str, Any]:
        """Not cached: a poll must see matches start and finish at once (every query is an index seek)."""
        with self.store.session() as s:
            counts = q.status_counts(s, league_id)
            running = q.in_flight(s, league_id)
            finished = q.recently_finished(s, league_id)
            standings = q.latest_standings(s, league_id, "", system)
        return {"counts": counts, "running": running, "finished": finished, "standings": standings}


__all__ = ["FALLBACK_BOOTSTRAP_LIMIT", "LeaderboardRow", "NotFound", "SYSTEMS", "SYSTEM_LABELS", "WebData"]
