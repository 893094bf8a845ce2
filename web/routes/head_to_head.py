"""The head-to-head matrix: every row policy against every column policy, as a page and as JSON."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from web.context import WebContext
from web.schemas import HeadToHeadOut, System, pair_out


def router(web: WebContext) -> APIRouter:
    router = APIRouter()
    data, templates, base_context = web.data, web.templates, web.base_context

    @router.get("/h2h", response_class=HTMLResponse, include_in_schema=False)
    def h2h_page(request: Request, league: str | None = None, game: str | None = None, system: System = "trueskill") -> Response:
        league_id, league_name = data.league(league)
        scope = data.check_game(league_id, game)
        order, table = data.matrix(league_id, scope, system)
        return templates.TemplateResponse(request, "h2h.html", base_context(
            request, league_name, order=order, table=table, game=scope, games=data.games(league_id), system=system,
        ))

    @router.get("/api/h2h", response_model=HeadToHeadOut, tags=["leaderboard"])
    def api_h2h(league: str | None = None, game: str | None = None, system: System = "trueskill") -> HeadToHeadOut:
        """Win rate of every row policy against every column policy (draws count half) and counts."""
        league_id, league_name = data.league(league)
        scope = data.check_game(league_id, game)
        order, table = data.matrix(league_id, scope, system)
        return HeadToHeadOut(league=league_name, game=scope, policies=order, pairs=[pair_out(a, b, p) for (a, b), p in sorted(table.items())])

    return router
