"""Matches played from outside the league runner (`arena serve-env` clients, browser play), stored
as league matches so the leaderboard rates the outside players beside the league's own policies.

Which opponents outsiders may name, league policies included, is league/opponent_pool.py's rule.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass

from arena.match import MatchRecord
from league.snapshots import rerate
from league.store import Store

CLIENT_SPEC_PREFIX = "serve-env:"  # the spec stored for an outside client's policy name


@dataclass(frozen=True)
class _Pairing:
    """What Store.launch needs of a pairing."""

    key: str
    game_id: str
    seats: tuple[str, ...]
    seed: int


class OutsidePlay:
    """Stores finished episodes in league `league` of `store` and rates them.

    Ratings are recomputed from the log (as `arena league rerate` does) at most every
    `rerate_every_s` seconds, and once more by `flush()` at shutdown, so a busy server does not
    rerate the whole league after every episode."""

    def __init__(self, store: Store, league: str = "serve-env", rerate_every_s: float = 5.0, source: str = "serve-env") -> None:
        self.store = store
        self.league, self.source = league, source
        self._league_id: int | None = None
        self.rerate_every_s = rerate_every_s
        self._lock = threading.Lock()
        self._last_rerate = 0.0
        self._dirty = False

    @property
    def league_id(self) -> int:
        # Opened on the first stored match, not at start-up: an empty league would become the
        # store's newest, the one `arena web` shows by default.
        if self._league_id is None:
            self._league_id = self.store.open_league(self.league, {"source": self.source})
        return self._league_id

    def open_league(self) -> int:
        """Create the league now (otherwise it is created with the first stored match); its id."""
        return self.league_id

    def reserved(self, name: str) -> str | None:
        """Why a client may not play under `name` (it belongs to a league policy), or None."""
        row = self.store.policy(name)
        if row is not None and not row.spec.startswith(CLIENT_SPEC_PREFIX):
            return f"name {name!r} belongs to a league policy ({row.spec}); declare another name"
        return None

    def record(self, record: MatchRecord) -> str | None:
        """Store one finished episode; returns its league match id."""
        seats = tuple(record.policies)
        for name, spec in zip(record.policies, record.specs):
            if spec == "client":
                self.store.upsert_policy(name, CLIENT_SPEC_PREFIX + name, {"source": self.source})
            elif self.store.policy(name) is None:
                self.store.upsert_policy(name, spec)
        self.store.upsert_game(record.game_id)
        key = f"{record.match_id}-{uuid.uuid4().hex[:8]}"  # the same seed may be played many times
        self.store.launch(self.league_id, [_Pairing(key, record.game_id, seats, record.seed)], [key])
        match_id = self.store.finish(self.league_id, key, record)
        with self._lock:
            self._dirty = True
            due = time.monotonic() - self._last_rerate >= self.rerate_every_s
        if due:
            self.flush()
        return None if match_id is None else str(match_id)

    def flush(self) -> None:
        """Bring the league's ratings up to date with every stored episode."""
        with self._lock:
            if not self._dirty:
                return
            self._dirty = False
            self._last_rerate = time.monotonic()
            rerate(self.store, self.league_id)
