"""Refuse deeply nested JSON before it is parsed.

Python's `json` parser recurses once per level: a 64 KiB body of 5,000 `[` raises RecursionError,
which servers turned into a 500 or a dropped socket. No message this project accepts nests deeper
than a dozen levels, so anything past `MAX_JSON_DEPTH` is refused with a clear error instead.
The scan skips strings (brackets inside them do not nest) and is linear in the text."""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_DEPTH = 32


class JSONTooDeep(ValueError):
    """JSON nested deeper than the server's limit."""


def nesting_depth(text: str | bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text (0 for a scalar). Text that is not
    JSON still gets a number; the parser then says what is wrong with it."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if text.count("[") + text.count("{") <= 1:  # the common case: nothing to scan
        return min(1, text.count("[") + text.count("{"))
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def check_depth(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> None:
    """JSONTooDeep naming the limit when `text` nests deeper than `limit`."""
    if nesting_depth(text) > limit:
        raise JSONTooDeep(f"JSON nested deeper than {limit} levels refused")


def loads_bounded(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads` that refuses nesting deeper than `limit` (JSONTooDeep, a ValueError like the
    parser's own errors) instead of recursing until Python gives up."""
    check_depth(text, limit)
    return json.loads(text)


class BoundedJSONBodies:
    """Plain ASGI middleware: an HTTP request whose body is JSON nested deeper than `limit` gets 400
    naming the limit. Only requests that declare a JSON content type are read, and only up to
    `max_bytes` (the servers' own body caps answer beyond that); the body is then replayed to the app."""

    def __init__(self, app: Any, limit: int = MAX_JSON_DEPTH, max_bytes: int = 1 << 20) -> None:
        self.app, self.limit, self.max_bytes = app, limit, max_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not _declares_json(scope):
            return await self.app(scope, receive, send)
        chunks: list[bytes] = []
        size, more = 0, True
        while more and size <= self.max_bytes:
            message = await receive()
            if message["type"] != "http.request":  # the client left: let the app see it
                return await self.app(scope, _replay([message], receive), send)
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if not more and nesting_depth(body) > self.limit:  # a longer body is the body cap's to refuse
            answer = json.dumps({"detail": f"JSON nested deeper than {self.limit} levels refused"}).encode()
            await send({"type": "http.response.start", "status": 400,
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(answer)).encode())]})
            await send({"type": "http.response.body", "body": answer})
            return
        await self.app(scope, _replay([{"type": "http.request", "body": body, "more_body": more}], receive), send)


def _declares_json(scope: dict[str, Any]) -> bool:
    for name, value in scope.get("headers") or []:
        if name.lower() == b"content-type":
            kind = value.split(b";")[0].strip().lower()
            return kind == b"application/json" or kind.endswith(b"+json")
    return False


def _replay(already: list[dict[str, Any]], receive: Any) -> Any:
    """A `receive` that hands the app the messages already read, then the rest from the client."""
    queue = list(already)

    async def replayed() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        return await receive()

    return replayed
