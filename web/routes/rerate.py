"""The one write: rebuild a league's rating snapshots from its match log, behind the bearer token."""

from __future__ import annotations

from fastapi import APIRouter, Depends

from web.context import WebContext
from web.schemas import RerateOut


def router(web: WebContext) -> APIRouter:
    router = APIRouter()
    data, store, require_write = web.data, web.store, web.require_write

    @router.post("/api/leagues/{name}/rerate", response_model=RerateOut, tags=["leagues"], dependencies=[Depends(require_write)])
    def api_rerate(name: str) -> RerateOut:
        """Rebuild a league's rating snapshots from its match log (league.snapshots.rerate).
        Needs `Authorization: Bearer $ARENA_WEB_TOKEN`."""
        from league.snapshots import rerate

        league_id, league_name = data.league(name)
        return RerateOut(league=league_name, snapshot_rows=rerate(store, league_id))

    return router
