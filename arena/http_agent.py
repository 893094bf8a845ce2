"""`http:URL` (or a bare `http://...` / `https://...` URL): an agent behind HTTP, in any language.

For every move the league POSTs the seat's move request as JSON (schema in docs/agents.md) and
reads back `{"move": "..."}`. The agent is untrusted and may be down: a timeout, a connection
error, a non-2xx status, a reply that is not that JSON, or one over the size cap is a
PolicyFailure, which the match driver records and hands to the game's invalid-move rule, so an
agent can lose its match but never stop a league.

Parameters: `timeout=SECONDS` (default 30) is a deadline for the whole move, from connecting to
the reply's last byte: an agent that trickles its reply a byte at a time loses the move when it
passes, however fast each byte comes. `token_env=VAR` sends `Authorization: Bearer $VAR` (the
token itself is never part of the spec; it is masked wherever a reply echoes it).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any
from urllib.parse import urlsplit

import httpx

from arena.policy import MoveRequest, Policy, PolicyFailure, PolicyReply, PolicySpec, PolicySpecError, float_param, reject_unknown_params
from arena.redaction import remember_secret

PROTOCOL = "llm-arena-agent/1"
MAX_REPLY_BYTES = 64 * 1024
DEFAULT_TIMEOUT_S = 30.0  # the whole move, connect to last byte


def move_request_json(request: MoveRequest) -> dict[str, Any]:
    """The documented body of a move request (docs/agents.md)."""
    obs = request.observation
    return {
        "protocol": PROTOCOL,
        "match_id": request.match_id,
        "game_id": request.game_id,
        "game_name": request.game_name,
        "rules": request.rules,
        "player": obs.player,
        "role": obs.role,
        "turn": obs.turn,
        "attempt": request.attempt,
        "observation": obs.text,
        "legal_moves": obs.legal_moves,
        "feedback": obs.feedback,
    }


class HttpAgentPolicy(Policy):
    """Asks an HTTP endpoint for each move."""

    def __init__(self, url: str, timeout: float, token_env: str | None) -> None:
        self.url, self.timeout, self.token_env = url, timeout, token_env
        if token_env:  # as api_key_env=: whatever the variable's name or the token's shape, it is masked
            remember_secret(os.environ.get(token_env))
        self.provider = f"http:{urlsplit(url).netloc}"  # the league limits calls per host together
        self._client: httpx.AsyncClient | None = None

    async def act(self, request: MoveRequest) -> PolicyReply:
        headers = {"content-type": "application/json", "user-agent": "llm-arena"}
        if self.token_env:
            token = os.environ.get(self.token_env)
            if not token:
                raise PolicyFailure(f"${self.token_env} is not set")
            remember_secret(token)  # set after start-up: an agent echoing it still gets it masked
            headers["authorization"] = f"Bearer {token}"
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        body = json.dumps(move_request_json(request), ensure_ascii=False).encode("utf-8")
        try:
            # httpx's timeout bounds each read; this one bounds the move, so trickling cannot beat it.
            async with asyncio.timeout(self.timeout):
                status, data = await self._post(self._client, body, headers)
        except (TimeoutError, httpx.TimeoutException):
            raise PolicyFailure(f"timeout after {self.timeout:g}s (the whole move, connect to last byte)") from None
        except httpx.HTTPError as exc:
            raise PolicyFailure(f"connection error: {type(exc).__name__}: {exc}"[:300]) from None
        if not 200 <= status < 300:
            raise PolicyFailure(f"HTTP {status}: {bytes(data[:200]).decode('utf-8', errors='replace')}")
        try:
            reply = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise PolicyFailure(f"reply is not JSON: {bytes(data[:100]).decode('utf-8', errors='replace')!r}") from None
        if not isinstance(reply, dict) or not isinstance(reply.get("move"), str):
            raise PolicyFailure('reply has no string "move" (expected {"move": "..."})')
        move = reply["move"]
        return PolicyReply(action=move, raw=move)

    async def _post(self, client: httpx.AsyncClient, body: bytes, headers: dict[str, str]) -> tuple[int, bytearray]:
        """The reply's status and body, read as it streams so the size cap holds before it is all in."""
        async with client.stream("POST", self.url, content=body, headers=headers) as response:
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_REPLY_BYTES:
                    raise PolicyFailure(f"reply over {MAX_REPLY_BYTES} bytes")
            return response.status_code, data

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def http_agent_policy(spec: PolicySpec) -> Policy:
    reject_unknown_params(spec, {"timeout", "token_env"})
    url = spec.target
    if spec.kind in ("http", "https") and url.startswith("//"):
        url = f"{spec.kind}:{url}"  # a bare URL was given as the spec
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
        raise PolicySpecError(f"policy spec {spec.text!r}: expected http:URL with an http(s) URL, e.g. http:http://127.0.0.1:9000/move")
    timeout = float_param(spec, "timeout", DEFAULT_TIMEOUT_S)
    if timeout <= 0:
        raise PolicySpecError(f"policy spec {spec.text!r}: timeout must be positive")
    return HttpAgentPolicy(url, timeout, spec.params.get("token_env") or None)

