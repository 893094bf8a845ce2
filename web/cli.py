"""`arena web`: serve the leaderboard of a league store. llm_arena_cli/app.py calls `register(app)`."""

from __future__ import annotations

import os
from typing import Optional

import typer

DB_HELP = "SQLAlchemy URL of the league store, e.g. sqlite:///arena.db (default: $ARENA_DB, else sqlite:///arena.db)."


def web_command(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (0.0.0.0 exposes it to the network)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
    cors_origin: Optional[list[str]] = typer.Option(None, "--cors-origin", help="Allow browser requests from this origin (repeatable); CORS is off by default."),
    refresh: float = typer.Option(2.0, "--refresh", min=0.0, help="Seconds a cached aggregate is served before the store is checked for new matches."),
) -> None:
    """Serve the web leaderboard (standings, head-to-head, matches and replays, live view, JSON API).

    Example: arena web --db sqlite:///demo.db --port 8000   then open http://127.0.0.1:8000/

    Read-only. The one writing endpoint (POST /api/leagues/NAME/rerate) needs
    `Authorization: Bearer $ARENA_WEB_TOKEN`; without that variable, writes are refused.
    """
    import uvicorn

    from sqlalchemy import make_url

    from league.db import default_db_url
    from league.store import store_exists
    from web.app import create_app

    err = typer.echo
    try:
        if not store_exists(db):  # read-only: a mistyped URL must not become a new empty store
            shown = make_url(db or default_db_url()).render_as_string(hide_password=True)
            err(f"error: no league store at {shown} (check --db; `arena league run CONFIG --db URL` starts one)", err=True)
            raise typer.Exit(code=2)
        app = create_app(db, cors_origins=cors_origin or None, refresh_s=refresh)
    except typer.Exit:
        raise
    except Exception as exc:  # noqa: BLE001 - an unreachable or unreadable store is one line
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        err(f"error: cannot open the league store: {type(exc).__name__}: {detail}", err=True)
        raise typer.Exit(code=2)
    typer.echo(f"arena web: http://{host}:{port}/  (store: {app.state.data.store._safe_url()}; writes {'enabled' if os.environ.get('ARENA_WEB_TOKEN') else 'disabled'})")
    uvicorn.run(app, host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("web")(web_command)
