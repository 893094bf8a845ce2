"""Matches: the filtered, paged list and one match's replay, as pages and as JSON. Pages cap long
replies and observations; the API returns them as stored."""

from __future__ import annotations

import math
from urllib.parse import urlencode
from datetime import date, datetime, time as dtime, timedelta, timezone
from typing import Any, Literal

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, Response

from web import queries as q
from web.context import WebContext
from web.data import NotFound
from web.schemas import MatchDetail, MatchId, MatchOut, MatchPage, Result, Status, TurnOut
from web.templating import cap

MAX_REPLY_CHARS = 2000  # shown per turn; longer replies are cut with a note (the API has the full text)
MAX_OBSERVATION_CHARS = 6000


def _day_range(since: date | None, until: date | None) -> tuple[datetime | None, datetime | None]:
    start = datetime.combine(since, dtime.min, tzinfo=timezone.utc) if since else None
    end = None
    if until and until < date.max:  # inclusive day; the last representable day has no upper bound
        end = datetime.combine(until + timedelta(days=1), dtime.min, tzinfo=timezone.utc)
    return start, end


def router(web: WebContext) -> APIRouter:
    router = APIRouter()
    data, store, templates, base_context = web.data, web.store, web.templates, web.base_context

    def match_filter(game: str | None, policy: str | None, result: str | None, status: str | None, since: date | None, until: date | None) -> q.MatchFilter:
        if result and not policy:
            raise HTTPException(400, "result: filtering by win/draw/loss needs a policy (whose result?)")
        start, end = _day_range(since, until)
        return q.MatchFilter(game=game or None, policy=policy or None, result=result or None, status=status or None, since=start, until=end)

    def matches_of(league: str | None, where: q.MatchFilter, page: int, per_page: int) -> tuple[str, list[dict[str, Any]], int]:
        league_id, league_name = data.league(league)
        with store.session() as s:
            rows, total = q.list_matches(s, league_id, where, page, per_page)
        return league_name, rows, total

    @router.get("/matches", response_class=HTMLResponse, include_in_schema=False)
    def matches_page(
        request: Request, league: str | None = None, game: str | None = None, policy: str | None = None,
        result: Result | Literal[""] | None = None, status: Status | Literal[""] | None = None,
        since: date | Literal[""] | None = None, until: date | Literal[""] | None = None,
        page: int = Query(1, ge=1, le=1_000_000), per_page: int = Query(50, ge=1, le=200),
    ) -> Response:
        where = match_filter(game, policy, result or None, status or None, since or None, until or None)
        league_name, rows, total = matches_of(league, where, page, per_page)
        league_id, _ = data.league(league_name)
        pages = max(1, math.ceil(total / per_page))
        params = {k: v for k, v in {"league": league, "game": game, "policy": policy, "result": result, "status": status,
                                     "since": since, "until": until, "per_page": per_page if per_page != 50 else None}.items() if v}
        # The pager's links carry every filter: built here as one query string (the template's
        # `urlencode` quotes a single URL segment, which turned the whole dict into one string).
        def page_href(number: int) -> str:
            return "?" + urlencode({**params, "page": number})

        return templates.TemplateResponse(request, "matches.html", base_context(
            request, league_name, rows=rows, total=total, page=page, pages=pages, per_page=per_page, filters=params,
            newer_href=page_href(page - 1) if page > 1 else None, older_href=page_href(page + 1) if page < pages else None,
            games=data.games(league_id), policies=sorted(data.stats(league_id).get("", {})),
        ))

    @router.get("/api/matches", response_model=MatchPage, tags=["matches"])
    def api_matches(
        league: str | None = None, game: str | None = None, policy: str | None = None, result: Result | None = None,
        status: Status | None = None, since: date | None = None, until: date | None = None,
        page: int = Query(1, ge=1, le=1_000_000), per_page: int = Query(50, ge=1, le=200),
    ) -> MatchPage:
        """Matches newest first. `result` (win/draw/loss) is from `policy`'s side; dates are inclusive days (UTC)."""
        where = match_filter(game, policy, result, status, since, until)
        league_name, rows, total = matches_of(league, where, page, per_page)
        return MatchPage(league=league_name, total=total, page=page, per_page=per_page, matches=[MatchOut(**r) for r in rows])

    def load_match(match_id: int) -> tuple[Any, list[Any]]:
        with store.session() as s:
            found = q.match_with_turns(s, match_id)
        if found is None:
            raise NotFound(f"no match with id {match_id}")
        return found

    @router.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def match_page(request: Request, match_id: MatchId, turn: int = Query(1, ge=1, le=1_000_000)) -> Response:
        row, turns = load_match(match_id)
        league_name = next((l.name for l in store.leagues() if l.id == row.league_id), None)
        shown = [
            {"t": t, "obs": cap(t.observation, MAX_OBSERVATION_CHARS), "raw": cap(t.raw, MAX_REPLY_CHARS), "action": cap(t.action, 500),
             "feedback": cap(t.feedback, 1000), "error": cap(t.error, 1000)}
            for t in turns
        ]
        current = min(turn, max(1, len(turns)))
        return templates.TemplateResponse(request, "match.html", base_context(
            request, league_name, m=q.match_summary(row), turns=shown, current=current,
            final_views=[cap(v, MAX_OBSERVATION_CHARS) for v in (row.final_views or [])],
        ))

    @router.get("/api/matches/{match_id}", response_model=MatchDetail, tags=["matches"])
    def api_match(match_id: MatchId) -> MatchDetail:
        """One match with every turn (replies as stored: capped by the match driver)."""
        row, turns = load_match(match_id)
        return MatchDetail(
            **q.match_summary(row), final_views=list(row.final_views or []),
            turns=[TurnOut(**{f: getattr(t, f) for f in TurnOut.model_fields}) for t in turns],
        )

    return router
