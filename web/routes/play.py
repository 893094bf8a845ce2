"""The Play page (`arena web --play`): a visitor picks a game and an opponent and plays it move by
move. Included by create_app only when play is on; otherwise these paths are 404 like any other.

The page sends JSON with fetch from its own origin. Writes take a JSON body (a cross-site form
cannot send one without a CORS preflight, which this app never grants for POST); a foreign Host or
Origin was refused before the route (web.middleware), and a browser's `Sec-Fetch-Site: cross-site`
is refused here too. A game's id, which only its page knows, is what lets a request move in it.
Games are counted per client address (a visitor's share of the slots).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from server_guards.client_slots import client_address
from server_guards.json_depth import JSONTooDeep, loads_bounded
from web.context import WebContext
from web.play import NAME_RULE, PlayError, view_out
from web.schemas import PlayOut

SessionId = Path(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="the game's id, from POST /api/play")


class StartIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    game: str = Field(min_length=1, max_length=100, description="a game id, as `arena games` lists them")
    opponent: str | None = Field(None, max_length=200, description="bot, random, a league policy's name, or a spec of a kind the server allows")
    name: str = Field(max_length=100, description=f"your name, the policy your finished games are rated under ({NAME_RULE})")
    players: int | None = Field(None, ge=1, le=8, description="players in the game (default 2 where the game allows it); every other seat is the opponent")
    seat: int = Field(0, ge=0, le=7, description="your seat, 0-based")
    seed: int | None = Field(None, ge=0, le=2**31 - 1, description="default: a random seed")


class MoveIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    move: str = Field(description="your move, as text; the game judges it")


def _json_body(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of a route that reads its body itself (`_read`), so the schema
    (and the fuzzer that works from it) knows what it takes."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


def router(web: WebContext) -> APIRouter:
    room = web.play
    assert room is not None, "the play router is included only when play is on"
    router = APIRouter(on_startup=[room.startup], on_shutdown=[room.shutdown])
    templates, base_context, config = web.templates, web.base_context, room.config

    @router.get("/play", response_class=HTMLResponse, include_in_schema=False)
    def play_page(request: Request) -> Response:
        games = room.games()
        return templates.TemplateResponse(request, "play.html", base_context(
            request, None,
            native=[g for g in games if g.source == "native"], textarena=[g for g in games if g.source != "native"],
            league_opponents=room.league_opponents(), typed_specs=config.typed_specs,
            extra_kinds=sorted(config.allowed_kinds - {"bot", "random"}), play_league=config.league,
            max_move=config.max_move_chars, name_rule=NAME_RULE,
        ))

    @router.post("/api/play", response_model=PlayOut, status_code=201, tags=["play"], openapi_extra=_json_body(StartIn))
    async def api_start(request: Request) -> dict[str, Any]:
        """Start a game: you at `seat`, the opponent at every other seat. Answers your first view
        (the opponents before you have moved). Needs `Content-Type: application/json`."""
        body = await _read(request, StartIn, config.max_body_bytes)
        with _refusals():
            entry = await room.start(game=body.game, opponent=body.opponent, name=body.name,
                                     players=body.players, seat=body.seat, seed=body.seed, client=client_address(request))
        return view_out(entry, config.league)

    @router.get("/api/play/{session_id}", response_model=PlayOut, tags=["play"])
    async def api_view(session_id: str = SessionId) -> dict[str, Any]:
        """The game's current view (e.g. after the page was reloaded)."""
        with _refusals():
            entry = room.get(session_id)
        return view_out(entry, config.league)

    @router.post("/api/play/{session_id}/move", response_model=PlayOut, tags=["play"], openapi_extra=_json_body(MoveIn))
    async def api_move(request: Request, session_id: str = SessionId) -> dict[str, Any]:
        """Send your move; answers your next view once the opponents have moved. A rejected move
        answers the same position with the game's `feedback`; the game's invalid-move rule decides
        how many attempts you have."""
        body = await _read(request, MoveIn, config.max_body_bytes)
        with _refusals():
            entry = await room.move(session_id, body.move)
        return view_out(entry, config.league)

    @router.delete("/api/play/{session_id}", status_code=204, tags=["play"])
    async def api_close(request: Request, session_id: str = SessionId) -> Response:
        """Leave the game. An unfinished game is not stored."""
        _same_site(request)
        await room.close(session_id)
        return Response(status_code=204)

    return router


@contextmanager
def _refusals() -> Iterator[None]:
    """A PlayError as the HTTP error it names."""
    try:
        yield
    except PlayError as exc:
        raise HTTPException(exc.status, str(exc)) from None


def _same_site(request: Request) -> None:
    """Refuse requests a browser marks as coming from another site. The Origin check in front
    (web.middleware) admits the sites `--cors-origin` trusts to read the API; games are played from
    this server's own page only, and fetch metadata still says so where a proxy dropped Origin."""
    if request.headers.get("sec-fetch-site") == "cross-site":
        raise HTTPException(403, "cross-site request refused: play from this server's own page")


async def _read(request: Request, model: type[BaseModel], limit: int) -> Any:
    """The JSON body as `model`, or one clear error: 415 not JSON, 403 cross-site, 413 too large,
    400 unparsable or nested too deep, 422 a field wrong."""
    _same_site(request)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/json":
        raise HTTPException(415, "send the body as JSON with Content-Type: application/json")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise HTTPException(413, f"request body over {limit} bytes")
    body = bytearray()
    async for chunk in request.stream():  # a chunked body has no declared length: count as it comes
        body += chunk
        if len(body) > limit:
            raise HTTPException(413, f"request body over {limit} bytes")
    try:
        data = loads_bounded(bytes(body))
    except JSONTooDeep as exc:  # the middleware refuses it first; this route does not rely on that
        raise HTTPException(400, f"body: {exc}") from None
    except ValueError as exc:
        raise HTTPException(400, f"body: invalid JSON: {exc}"[:200]) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise HTTPException(422, f"{where}: {first['msg']}") from None
