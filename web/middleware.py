"""Middleware every response passes through: the security headers (a strict Content-Security-Policy,
scripts only from /static, as a second wall behind the escaping) and, only when origins are given,
CORS for GET."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


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


def add_middleware(app: FastAPI, cors_origins: list[str] | None) -> None:
    """CORS (off unless origins are given) inside, the security headers outermost."""
    if cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET"], allow_headers=["Authorization"])

    app.add_middleware(SecurityHeaders)
