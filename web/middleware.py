"""Middleware every request passes through, outermost first:
- the security headers (a strict Content-Security-Policy, scripts only from /static, as a second
  wall behind the escaping), on every answer, refusals included;
- the Host and Origin checks (server_guards.origins): a Host that is none of the server's names is
  refused everywhere (DNS rebinding), a foreign Origin on every state-changing request;
- JSON bodies nested deeper than server_guards.json_depth.MAX_JSON_DEPTH refused with 400;
- only when origins are given, CORS for GET."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from server_guards.json_depth import MAX_JSON_DEPTH, BoundedJSONBodies
from server_guards.origins import HostAndOriginGuard, OriginPolicy

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
ORIGIN_HINT = "`arena web --cors-origin ORIGIN` trusts a site"
HOST_HINT = "`arena web --allowed-host NAME` adds a name"


class SecurityHeaders:
    """Adds the CSP and friends to every response (plain ASGI: no per-request task overhead)."""

    HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in self.HEADERS if h[0] not in present]
            await send(message)

        await self.app(scope, receive, with_headers)


def origin_policy(bind_host: str | None, allowed_hosts: list[str] | None, cors_origins: list[str] | None) -> OriginPolicy:
    """The names the server answers to: those of `bind_host` plus `allowed_hosts`. Without a bind
    address (an app served by someone else's uvicorn or a test client) the server cannot know its
    names, so any Host passes unless names are given; Origin is checked either way.

    The cross origins allowed to write are the CORS origins: `--cors-origin` already says "I trust
    pages of this site to call this API", and one list is one decision. Their browsers still get no
    CORS grant beyond GET, so a trusted site's page cannot start games or use the token by itself."""
    return OriginPolicy.for_bind(bind_host or "", hosts=allowed_hosts or (), origins=cors_origins or (),
                                 origin_hint=ORIGIN_HINT, host_hint=HOST_HINT)


def add_middleware(app: FastAPI, cors_origins: list[str] | None, policy: OriginPolicy, max_json_bytes: int) -> None:
    """CORS (off unless origins are given) inside, then the JSON nesting limit, the Host/Origin
    guard, and the security headers outermost (FastAPI wraps the last one added around the rest)."""
    if cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET"], allow_headers=["Authorization"])

    app.add_middleware(BoundedJSONBodies, limit=MAX_JSON_DEPTH, max_bytes=max_json_bytes)
    app.add_middleware(HostAndOriginGuard, policy=policy)
    app.add_middleware(SecurityHeaders)
