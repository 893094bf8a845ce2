"""An outside agent that trickles its reply (one byte at a time, each byte well inside the read
timeout) loses the move once `timeout=` has passed since the request started: the timeout is a
deadline for the whole move, connect to last byte, not a bound on each read (issue 56, finding 4)."""

from __future__ import annotations

import asyncio
import time
from typing import AsyncIterator

import pytest

from arena.match import play_match
from arena.policy import make_policy
from games.registry import make_game

BYTE_EVERY_S = 0.1  # far inside any read timeout, so only a whole-move deadline can stop it
REPLY = b'{"move": "' + b" " * 200 + b'4"}'  # valid JSON, but 21 s at that pace
DEADLINE_S = 0.6
MARGIN_S = 0.5  # scheduling slack on a loaded machine


async def _trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answer one request with a correct 200 whose bytes come one at a time; stops when the
    client goes away or the reply is out (bounded by len(REPLY) * BYTE_EVERY_S)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
        await reader.readexactly(length)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(REPLY))
        for byte in REPLY:
            if reader.at_eof():  # the client gave up
                break
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(BYTE_EVERY_S)
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


@pytest.fixture
async def trickling_agent() -> AsyncIterator[str]:
    handlers: set[asyncio.Task] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handlers.add(asyncio.current_task())  # type: ignore[arg-type]
        await _trickle(reader, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/move"
    finally:
        server.close()
        await asyncio.wait_for(asyncio.gather(*handlers, return_exceptions=True), 5)  # they stop once the client left


async def test_a_trickling_agent_loses_its_move_at_the_deadline(trickling_agent: str) -> None:
    agent = make_policy(f"http:{trickling_agent},timeout={DEADLINE_S}")
    started = time.perf_counter()
    record = await asyncio.wait_for(play_match(make_game("tictactoe"), [agent, make_policy("bot")], seed=1), 10)
    elapsed = time.perf_counter() - started
    await agent.close()
    first = record.turns[0]
    assert f"timeout after {DEADLINE_S:g}s" in first.error and not first.valid and first.penalty == "forfeit"
    assert record.outcome["ranks"] == [2, 1]
    assert first.latency_s < DEADLINE_S + MARGIN_S and elapsed < DEADLINE_S + MARGIN_S + 1, (first.latency_s, elapsed)
