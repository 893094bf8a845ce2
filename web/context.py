"""What every route of one app shares: its store, the cached read model over it, the templates, the
write token, and the page context every template gets.

Routes are built per app (`routes.<area>.router(web)`) and close over this, as create_app's
closures did: each app owns its store and caches (tests build several in one process), and the
leaderboard's fast path reads memory without a dependency call or a thread hop.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import HTTPException, Request
from fastapi.responses import JSONResponse, Response
from fastapi.templating import Jinja2Templates

from league.store import Store
from web.data import SYSTEM_LABELS, WebData

if TYPE_CHECKING:
    from web.play import PlayRoom


def is_api(request: Request) -> bool:
    return request.url.path.startswith("/api/")


@dataclass
class WebContext:
    store: Store
    data: WebData
    templates: Jinja2Templates
    write_token_env: str
    write_token: str | None  # held in memory only, never logged
    play: PlayRoom | None = None  # with `arena web --play`; None: the Play page is off

    def base_context(self, request: Request, league: str | None, **extra: Any) -> dict[str, Any]:
        try:
            names = self.data.league_names()
        except Exception:  # noqa: BLE001 - an error page must render even when the store cannot
            names = []
        return {"league": league, "leagues": names, "systems": SYSTEM_LABELS, "play_enabled": self.play is not None, **extra}

    def error_page(self, request: Request, status: int, message: str) -> Response:
        if is_api(request):
            return JSONResponse({"detail": message}, status_code=status)
        return self.templates.TemplateResponse(request, "error.html", {**self.base_context(request, None), "status": status, "message": message}, status_code=status)

    def require_write(self, request: Request) -> None:
        if self.write_token is None:
            raise HTTPException(403, f"writes are disabled: start the server with ${self.write_token_env} set")
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given:
            raise HTTPException(401, "this endpoint needs Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"})
        if not hmac.compare_digest(given.encode(), self.write_token.encode()):
            raise HTTPException(403, "wrong token")
