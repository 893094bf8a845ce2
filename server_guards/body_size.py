"""A cap on HTTP request bodies in bytes, for every server: a declared length over the cap is refused
before anything is read, and a streamed (chunked) body as soon as it passes the cap."""

from __future__ import annotations

import json
from typing import Any


class BoundedBodies:
    """Refuses HTTP bodies over `limit` bytes with 413, whether the client declares the length or
    streams the body chunked (a declared length is checked before anything is read)."""

    def __init__(self, app: Any, limit: int, hint: str = "") -> None:
        self.app, self.limit, self.hint = app, limit, hint  # hint: the setting that raises the limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            return await self._refuse(send)
        seen = 0
        refused = False

        async def bounded_receive() -> dict[str, Any]:
            # Over the limit: answer 413 ourselves and tell the app the client left, so it stops
            # reading (an exception here would be turned into a 400 by the body parser).
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                refused = True
                await self._refuse(send)
                return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict[str, Any]) -> None:
            if not refused:  # once refused, the app's own answer is dropped
                await send(message)

        await self.app(scope, bounded_receive, guarded_send)

    async def _refuse(self, send: Any) -> None:
        body = json.dumps({"detail": f"request body over {self.limit} bytes" + (f" ({self.hint})" if self.hint else "")}).encode()
        await send({"type": "http.response.start", "status": 413, "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
