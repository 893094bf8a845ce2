"""Fair shares of a server's session slots: a cap on all sessions and a cap per client address, so
one client cannot hold every slot (`arena web --play`, `arena serve-env`).

Slots are taken and given back on the event loop's thread (no lock needed); `take` answers why a
client is refused, in one line naming the limit, or None and the slot is held until `give_back`."""

from __future__ import annotations

from collections import Counter


class ClientSlots:
    def __init__(self, total: int, per_client: int, *, total_hint: str = "", per_client_hint: str = "") -> None:
        if total < 1 or per_client < 1:
            raise ValueError("slot limits are at least 1")
        self.total, self.per_client = total, per_client
        self.total_hint, self.per_client_hint = total_hint, per_client_hint
        self._held: Counter[str] = Counter()

    @property
    def in_use(self) -> int:
        return sum(self._held.values())

    def held_by(self, client: str) -> int:
        return self._held[client]

    def refusal(self, client: str) -> str | None:
        """Why `client` may not take a slot now, or None."""
        if self.in_use >= self.total:
            return f"server at capacity: {self.in_use}/{self.total} sessions" + (f" ({self.total_hint})" if self.total_hint else "")
        if self._held[client] >= self.per_client:
            return (f"this client already holds {self._held[client]}/{self.per_client} sessions"
                    + (f" ({self.per_client_hint})" if self.per_client_hint else ""))
        return None

    def take(self, client: str) -> str | None:
        refused = self.refusal(client)
        if refused is None:
            self._held[client] += 1
        return refused

    def give_back(self, client: str) -> None:
        if self._held[client] <= 1:
            self._held.pop(client, None)
        else:
            self._held[client] -= 1


def client_address(scope_or_request: object) -> str:
    """The client's IP from an ASGI scope or a Starlette Request/WebSocket ('unknown' without one).
    Behind a proxy, run uvicorn with --proxy-headers so this is the real client's address."""
    client = getattr(scope_or_request, "client", None)
    if client is None and isinstance(scope_or_request, dict):
        client = scope_or_request.get("client")
    if client is None:
        return "unknown"
    host = getattr(client, "host", None)
    if host is None and isinstance(client, (tuple, list)) and client:
        host = client[0]
    return str(host or "unknown")
