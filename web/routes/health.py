"""`/healthz`: a plain "ok" for load balancers and the tests that wait for a server."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from web.context import WebContext


def router(web: WebContext) -> APIRouter:
    router = APIRouter()

    @router.get("/healthz", response_class=PlainTextResponse, include_in_schema=False)
    async def healthz() -> str:
        return "ok"

    return router
