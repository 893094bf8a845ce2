"""Host and Origin checks for every server, as one plain ASGI middleware.

- Host: a request whose `Host` header names none of the server's names is refused (DNS rebinding:
  a page on evil.example whose name was re-pointed at 127.0.0.1 reaches a loopback server, but its
  requests still say `Host: evil.example`). The names come from the bind address (`server_names`)
  plus what the operator adds; binding all interfaces (0.0.0.0, ::) admits any Host unless names
  are given, since the server cannot know the names it is reached by.
- Origin: browsers send `Origin` on cross-site requests and on every WebSocket handshake. A
  WebSocket handshake or a state-changing request (not GET, HEAD, OPTIONS) whose `Origin` is not the
  server's own (same scheme-less host:port as `Host`) nor one the operator allowed is refused.
  Tools that send no `Origin` (curl, SDKs, OpenEnv's client) are not browsers and pass.

Refusals are one JSON line, 403 for HTTP; a refused WebSocket is closed before it is accepted
(uvicorn answers the handshake with 403).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any, Iterable
from urllib.parse import urlsplit

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
ANY_INTERFACE = {"0.0.0.0", "::", ""}


def server_names(bind_host: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """The Host names a server bound to `bind_host` answers to, lower-case and without port; None
    when any name is admitted (bound to every interface and no names given)."""
    names = {_normal_host(name) for name in extra if name.strip()}
    if bind_host.strip() in ANY_INTERFACE:
        return frozenset(names) if names else None
    names.add(_normal_host(bind_host))
    if _is_loopback(bind_host):
        names.update(LOOPBACK_NAMES)
    return frozenset(names)


def _is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _normal_host(host: str) -> str:
    """`Host` without its port, lower-case; IPv6 without brackets."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:  # name:port; a bare IPv6 address has several colons
        return host.rsplit(":", 1)[0]
    return host


def _normal_origin(origin: str) -> str:
    parts = urlsplit(origin.strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


@dataclass(frozen=True)
class OriginPolicy:
    """Which Host names and cross-site origins a server accepts. `hosts=None` admits any Host."""

    hosts: frozenset[str] | None
    origins: frozenset[str] = field(default_factory=frozenset)  # "scheme://host:port", as browsers send them
    origin_hint: str = "the server's --allow-origin adds one"
    host_hint: str = "the server's --allowed-host adds one"

    @classmethod
    def for_bind(cls, bind_host: str, *, hosts: Iterable[str] = (), origins: Iterable[str] = (), **hints: str) -> "OriginPolicy":
        return cls(server_names(bind_host, hosts), frozenset(_normal_origin(o) for o in origins if o.strip()), **hints)

    def host_refusal(self, host_header: str | None) -> str | None:
        if self.hosts is None:
            return None
        if not host_header:
            return "request without a Host header refused"
        if _normal_host(host_header) not in self.hosts:
            return f"Host {host_header[:100]!r} is not a name of this server ({self.host_hint})"
        return None

    def origin_refusal(self, origin: str | None, host_header: str | None) -> str | None:
        """None for a request the server may act on. `Origin: null` (sandboxed pages, file://) is a
        browser that hides where it comes from: refused like any foreign origin."""
        if origin is None:
            return None
        if origin.strip().lower() != "null":
            parts = urlsplit(origin.strip())
            if host_header and parts.netloc.lower() == host_header.strip().lower() and parts.scheme in ("http", "https"):
                return None  # same origin: the server's own page
            if _normal_origin(origin) in self.origins:
                return None
        return f"cross-origin request from {origin[:100]!r} refused ({self.origin_hint})"


class HostAndOriginGuard:
    """Plain ASGI middleware applying an OriginPolicy to HTTP requests and WebSocket handshakes."""

    def __init__(self, app: Any, policy: OriginPolicy) -> None:
        self.app, self.policy = app, policy

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = _headers(scope)
        host = headers.get("host")
        refusal = self.policy.host_refusal(host)
        if refusal is None and (scope["type"] == "websocket" or scope.get("method", "GET") not in SAFE_METHODS):
            refusal = self.policy.origin_refusal(headers.get("origin"), host)
        if refusal is None:
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008, "reason": refusal[:120]})
            return
        body = json.dumps({"detail": refusal}).encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    """Request headers by lower-case name (the first of repeated ones), decoded as latin-1 as HTTP says."""
    found: dict[str, str] = {}
    for name, value in scope.get("headers") or []:
        found.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return found
