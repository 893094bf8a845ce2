"""The leaderboard: the front page (a how-to-start page over an empty store), the league list,
standings as JSON and CSV (Bradley-Terry's interval and pooling selectable). Answers are kept in
memory between data changes and the page is rendered once per answer."""

from __future__ import annotations

import csv
import io
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool

from league.move_stats import DEFINITIONS, MOVE_DEFINITION
from web.context import WebContext
from web.data import SYSTEM_LABELS
from web.schemas import Interval, LeaderboardEntry, LeaderboardOut, LeagueOut, Pooling, System


def _csv_cell(value: Any) -> Any:
    """Spreadsheets run cells that start with = + - @ as formulas: neutralise names that do."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def router(web: WebContext) -> APIRouter:
    router = APIRouter()
    data, templates, base_context = web.data, web.templates, web.base_context

    leaderboard_template = templates.env.get_template("leaderboard.html")
    rendered: dict[tuple[str, ...], tuple[Any, bytes]] = {}
    def leaderboard_rows(league: str | None, game: str | None, system: str, ci: str, pooling: str) -> tuple[str, str, list[str], list, bool, list[str]]:
        league_id, league_name = data.league(league)
        scope = data.check_game(league_id, game)
        rows, from_snapshots = data.leaderboard(league_id, scope, system, ci, pooling)
        answer = (league_name, scope, data.games(league_id), rows, from_snapshots, data.league_names())
        data.cache.values[(league_id, ("page", league or "", game or "", system, ci, pooling))] = (data.version(league_id), answer)
        return answer

    async def fast_leaderboard(league: str | None, game: str | None, system: str, ci: str = "bootstrap", pooling: str = "games") -> tuple[str, str, list[str], list, bool, list[str]]:
        if system != "bt":  # the choices only change Bradley-Terry
            ci, pooling = "bootstrap", "games"
        # Between data changes the answer is in memory: serve it without a thread hop or a query.
        hit = data.peek(league, ("page", league or "", game or "", system, ci, pooling))
        if hit is not None:
            return hit
        return await run_in_threadpool(leaderboard_rows, league, game, system, ci, pooling)

    @router.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def leaderboard_page(request: Request, league: str | None = None, game: str | None = None, system: System = "trueskill",
                               ci: Interval = "bootstrap", pooling: Pooling = "games") -> Response:
        if league is None and not await run_in_threadpool(data.league_names):
            # A new store is not an error: say how to fill it (200, so monitors see a live page).
            return templates.TemplateResponse(request, "empty.html", base_context(request, None, db_url=data.store._safe_url()))
        answer = await fast_leaderboard(league, game, system, ci, pooling)
        key = (league or "", game or "", system, ci, pooling)
        hit = rendered.get(key)
        if hit is None or hit[0] is not answer:  # the page is rendered once per cached answer
            league_name, scope, games, rows, from_snapshots, names = answer
            html = leaderboard_template.render({
                "league": league_name, "leagues": names, "systems": SYSTEM_LABELS, "play_enabled": web.play is not None,
                "rows": rows, "game": scope, "games": games, "system": system, "from_snapshots": from_snapshots,
                "ci": ci, "pooling": pooling, "bt_choice": system == "bt" and (ci, pooling) != ("bootstrap", "games"),
                "definitions": DEFINITIONS, "move_definition": MOVE_DEFINITION,
            })
            hit = rendered[key] = (answer, html.encode())
        return Response(hit[1], media_type="text/html; charset=utf-8")

    @router.get("/api/leagues", response_model=list[LeagueOut], tags=["leagues"])
    def api_leagues() -> list[LeagueOut]:
        """Every league in the store, with the games it played."""
        out = []
        for name in data.league_names():
            league_id, _ = data.league(name)
            out.append(LeagueOut(name=name, games=data.games(league_id)))
        return out

    @router.get("/api/leaderboard", response_model=LeaderboardOut, tags=["leaderboard"])
    async def api_leaderboard(league: str | None = None, game: str | None = None, system: System = "trueskill",
                              ci: Interval = "bootstrap", pooling: Pooling = "games") -> LeaderboardOut:
        """Standings of a league (newest by default), overall or for one game. `ci` and `pooling`
        choose Bradley-Terry's interval and how it pools games (ignored by the other systems)."""
        league_name, scope, _, rows, from_snapshots, _ = await fast_leaderboard(league, game, system, ci, pooling)
        if system != "bt":
            ci, pooling = "bootstrap", "games"
        return LeaderboardOut(league=league_name, game=scope, system=system, ci=ci, pooling=pooling, from_snapshots=from_snapshots,
                              rows=[LeaderboardEntry(**vars(r)) for r in rows])

    @router.get("/api/leaderboard.csv", response_class=PlainTextResponse, tags=["leaderboard"])
    async def api_leaderboard_csv(league: str | None = None, game: str | None = None, system: System = "trueskill",
                                  ci: Interval = "bootstrap", pooling: Pooling = "games") -> Response:
        """The same standings as CSV (cells that a spreadsheet would run as formulas are quoted)."""
        league_name, scope, _, rows, _, _ = await fast_leaderboard(league, game, system, ci, pooling)
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        fields = list(LeaderboardEntry.model_fields)
        writer.writerow(fields)
        for row in rows:
            writer.writerow([_csv_cell(getattr(row, f)) for f in fields])
        filename = f"leaderboard-{system}-{scope or 'all'}.csv".replace('"', "")
        return Response(buffer.getvalue(), media_type="text/csv; charset=utf-8", headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    return router
