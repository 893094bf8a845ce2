"""The web leaderboard: FastAPI, server-rendered Jinja2 pages (autoescape on) and a JSON API.

Read-only by default. The one writing endpoint (rebuilding a league's rating snapshots through
league.snapshots.rerate) needs `Authorization: Bearer <token>` matching the environment variable
named by `write_token_env`; with that variable unset, writes are refused. CORS stays off unless
`cors_origins` is given. A Host that is none of the server's names, a state-changing request from
a foreign Origin and JSON nested too deep are refused before any route (web.middleware). Every
page carries a strict Content-Security-Policy (scripts only from /static), as a second wall
behind the escaping. With `play` (`arena web --play`) the Play page is
added, and visitors' finished games are written through league.outside_play.

This module only wires: response models are in web.schemas, routes by area in web.routes,
error answers in web.errors, headers and CORS in web.middleware.
"""

from __future__ import annotations

import os

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from arena.redaction import install_log_redaction
from league.store import Store
from web.context import WebContext
from web.data import WebData
from web.errors import add_error_handlers
from web.middleware import add_middleware, origin_policy
from web.play import PlayConfig, PlayRoom
from web.routes import evals, head_to_head, health, leaderboard, live, matches, policies, rerate, runs
from web.routes import play as play_routes
from web.templating import HERE, make_templates

# Included in this order, which is also the order of the OpenAPI schema.
ROUTES = (health, leaderboard, policies, head_to_head, matches, live, runs, evals, rerate)


def create_app(db_url: str | None = None, write_token_env: str = "ARENA_WEB_TOKEN", cors_origins: list[str] | None = None, refresh_s: float = 2.0,
               play: PlayConfig | None = None, bind_host: str | None = None, allowed_hosts: list[str] | None = None) -> FastAPI:
    """The app over the league store at `db_url` (default: $ARENA_DB, else sqlite:///arena.db).
    With `play`, also the Play page (web.routes.play), whose finished games join its league.
    `bind_host` (the address `arena web` listens on) and `allowed_hosts` are the Host names it
    answers to (web.middleware.origin_policy)."""
    install_log_redaction()  # served by uvicorn directly too, not only through `arena web`
    store = Store(db_url)
    web = WebContext(
        store=store, data=WebData(store, refresh_s), templates=make_templates(),
        write_token_env=write_token_env, write_token=os.environ.get(write_token_env) or None,
        play=PlayRoom(play, store) if play is not None else None,
    )
    app = FastAPI(
        title="LLM arena leaderboard", version="1.0",
        description="Read-only JSON API over a league store: standings, head-to-head, matches, replays, live progress.",
        openapi_url="/api/openapi.json", docs_url=None, redoc_url=None,  # the doc UIs load scripts from a CDN
    )
    app.state.data = web.data
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    # The largest JSON body any route takes is a play request; nothing else reads one.
    max_json_bytes = play.max_body_bytes if play is not None else PlayConfig.max_body_bytes
    add_middleware(app, cors_origins, origin_policy(bind_host, allowed_hosts, cors_origins), max_json_bytes)
    add_error_handlers(app, web)
    for area in ROUTES:
        app.include_router(area.router(web))
    if web.play is not None:  # off by default: it spends the server's compute and writes to the store
        app.include_router(play_routes.router(web))

    @app.on_event("shutdown")
    def close_store() -> None:
        store.close()

    return app


__all__ = ["create_app"]
