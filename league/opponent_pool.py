"""The opponents a server plays for outsiders (`arena serve-env` clients, `arena web --play`
visitors): which ones it serves, and one policy object per opponent for the whole server.

An outsider's choice spends the server's compute, money or network, so every server applies the
same rules, here:
- `bot` and `random` are always served; they are cheap and stateless, so each game gets its own and
  they take no slot among the held ones;
- further kinds only where the operator allowed them (`--allow`, `--play-allow`); `human` never,
  whatever is allowed, because it would read the server's terminal;
- league policies by name (with a store), built from their registered spec; a server that trusts
  the league's owner serves them whatever their kind (serve-env), else only if their kind is
  allowed too (the play page); an outside player (a client or visitor stored by name) never;
- one object per spec for the whole server, as a league shares one per entry, so a `local` or `hf`
  opponent loads its model once and batches the moves of concurrent games; at most
  MAX_HELD_OPPONENTS are held, because each may hold a model.
"""

from __future__ import annotations

import logging
import threading
from typing import Iterable

from arena.policy import Policy, PolicySpec, PolicySpecError, known_kinds, make_policy
from league.outside_play import CLIENT_SPEC_PREFIX, OutsidePlay

log = logging.getLogger(__name__)

SCRIPTED_KINDS = frozenset({"bot", "random"})  # always served: no model, no network, no file
NEVER_SERVED = frozenset({"human"})  # would read the server's terminal
MAX_HELD_OPPONENTS = 16  # distinct non-scripted opponents held at once (each may hold a model)


class OpponentRefused(PolicySpecError):
    """An opponent this server does not play for outsiders (its text says why and what is allowed)."""


class PoolFull(OpponentRefused):
    """The server already holds MAX_HELD_OPPONENTS distinct opponents."""


def allowed_kinds(extra: Iterable[str], flag: str) -> frozenset[str]:
    """The scripted kinds plus the operator's `extra` ones (given with `flag`); ValueError names a
    kind that is never served or does not exist."""
    wanted = {kind.strip().lower() for kind in extra}
    kinds = known_kinds()
    for kind in sorted(wanted):
        if kind in NEVER_SERVED:
            raise ValueError(f"{flag} {kind}: a {kind} policy would read this server's terminal")
        if kind not in kinds:
            raise ValueError(f"{flag} {kind}: no such policy kind (kinds: {', '.join(sorted(kinds))})")
    return SCRIPTED_KINDS | frozenset(wanted)


class OpponentPool:
    """Every opponent a server plays, built on first request and shared by every game after it.
    Safe to call from worker threads (the play page resolves opponents off the event loop)."""

    def __init__(self, allowed: Iterable[str], *, outside: OutsidePlay | None = None, trust_league_policies: bool = False,
                 allow_hint: str = "the operator allows more kinds") -> None:
        self.allowed = frozenset(allowed)
        self.outside = outside  # league policies by name, where the server has a store
        self.trust_league_policies = trust_league_policies
        self.allow_hint = allow_hint  # how this server's operator allows a kind, for the refusal
        self._held: dict[str, Policy] = {}
        self._lock = threading.Lock()

    def get(self, wanted: str) -> Policy:
        """The opponent `wanted` names (a league policy's name or a spec); OpponentRefused says why
        not, PolicySpecError names a bad spec."""
        with self._lock:
            held = self._held.get(wanted)
            if held is not None:
                return held
            spec, name = self._resolve(wanted)
            if PolicySpec.parse(spec).kind in SCRIPTED_KINDS:
                return self._make(spec, name)
            if len(self._held) >= MAX_HELD_OPPONENTS:
                raise PoolFull(f"this server already holds {MAX_HELD_OPPONENTS} distinct opponents; choose one already in play")
            policy = self._held[wanted] = self._make(spec, name)
            return policy

    def refusal(self, wanted: str) -> str | None:
        """Why `wanted` would be refused (a bad spec included), or None; builds nothing."""
        try:
            self._resolve(wanted)
        except PolicySpecError as exc:
            return str(exc)
        return None

    async def close(self) -> None:
        with self._lock:
            policies, self._held = list(self._held.values()), {}
        for policy in policies:
            try:
                await policy.close()
            except Exception as exc:  # noqa: BLE001 - shutting down: report and go on closing the rest
                log.warning("closing %s failed: %s", policy.spec, exc)

    def serves_league_policy(self, spec: str) -> bool:
        """Whether a league policy registered with `spec` is served here (to list the choices)."""
        if spec.startswith(CLIENT_SPEC_PREFIX):
            return False
        try:
            return self._serves(PolicySpec.parse(spec).kind, league_policy=True)
        except PolicySpecError:
            return False

    def _serves(self, kind: str, *, league_policy: bool) -> bool:
        return kind not in NEVER_SERVED and (kind in self.allowed or (league_policy and self.trust_league_policies))

    def _resolve(self, wanted: str) -> tuple[str, str | None]:
        """(the spec to build, the league name to give it) for `wanted`, or OpponentRefused."""
        row = self.outside.store.policy(wanted) if self.outside is not None else None
        if row is not None and row.spec.startswith(CLIENT_SPEC_PREFIX):
            raise OpponentRefused(f"{wanted!r} is an outside player (a visitor or serve-env client), not a policy this server can play")
        spec = row.spec if row is not None else wanted
        kind = PolicySpec.parse(spec).kind
        if not self._serves(kind, league_policy=row is not None):
            what = f"league policy {wanted!r} is a {kind!r} policy, a kind" if row is not None else f"policy kind {kind!r} is"
            allowed = ", ".join(sorted(self.allowed - NEVER_SERVED))
            raise OpponentRefused(f"{what} not served here (allowed: {allowed}; {self.allow_hint})")
        return spec, None if row is None else row.name

    @staticmethod
    def _make(spec: str, name: str | None) -> Policy:
        policy = make_policy(spec)
        if name is not None:
            policy.name = name
        return policy
