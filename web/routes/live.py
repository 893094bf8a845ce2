"""What a league is doing now: matches by status, those in flight, the newest results and standings."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from web.context import WebContext
from web.schemas import LiveOut, MatchOut, point_out


def router(web: WebContext) -> APIRouter:
    router = APIRouter()
    data, templates, base_context = web.data, web.templates, web.base_context

    @router.get("/live", response_class=HTMLResponse, include_in_schema=False)
    def live_page(request: Request, league: str | None = None) -> Response:
        league_id, league_name = data.league(league)
        return templates.TemplateResponse(request, "live.html", base_context(request, league_name, live=data.live(league_id)))

    @router.get("/api/live", response_model=LiveOut, tags=["live"])
    def api_live(league: str | None = None) -> LiveOut:
        """What the league is doing now: matches by status, those in flight, the newest results
        and the newest standings snapshot (TrueSkill). Poll it every few seconds."""
        league_id, league_name = data.league(league)
        live = data.live(league_id)
        return LiveOut(
            league=league_name, counts=live["counts"], running=[MatchOut(**m) for m in live["running"]],
            finished=[MatchOut(**m) for m in live["finished"]],
            standings=[{"policy": st.policy, **point_out(st).model_dump()} for st in live["standings"]],
        )

    return router
