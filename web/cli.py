"""`arena web`: serve the leaderboard of a league store. llm_arena_cli/app.py calls `register(app)`."""

from __future__ import annotations

import os
from typing import Optional

import typer

from league.cli.store_option import DB_HELP


def web_command(
    db: Optional[str] = typer.Option(None, "--db", help=DB_HELP),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (0.0.0.0 exposes it to the network)."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="TCP port."),
    cors_origin: Optional[list[str]] = typer.Option(None, "--cors-origin", help="Trust pages of this origin, e.g. https://lab.example (repeatable): CORS lets them read the API, and their Origin passes the check on writes (still token-guarded); none by default."),
    allowed_host: Optional[list[str]] = typer.Option(None, "--allowed-host", help="A further Host name this server answers to, e.g. the proxy's public name (repeatable); default: the --host address, plus localhost names on a loopback one. Other Hosts get 403 (DNS rebinding)."),
    refresh: float = typer.Option(2.0, "--refresh", min=0.0, help="Seconds a cached aggregate is served before the store is checked for new matches."),
    play: bool = typer.Option(False, "--play", help="Add the Play page: visitors play games in the browser against bot, random and league policies (it spends this server's compute; finished games are stored and rated)."),
    play_allow: Optional[list[str]] = typer.Option(None, "--play-allow", help="With --play: a further policy kind visitors may play against (repeatable: local, hf, openai, litellm, http); LLM kinds spend compute or money."),
    play_league: str = typer.Option("web-play", "--play-league", help="With --play: the league finished games join."),
    play_sessions: int = typer.Option(32, "--play-sessions", min=1, help="With --play: games in play at once; more are refused (503) until one ends or idles out."),
    play_max_per_client: int = typer.Option(4, "--play-max-per-client", min=1, help="With --play: games one client address holds at once; more are refused (429). Behind a proxy every visitor shares its address unless uvicorn sees the real one."),
    play_idle: float = typer.Option(600.0, "--play-idle", min=1.0, help="With --play: seconds a game stays open without a start or a move (looking at it does not count)."),
) -> None:
    """Serve the web leaderboard (standings, head-to-head, matches and replays, live view, JSON API).

    Example: arena web --db sqlite:///demo.db --port 8000   then open http://127.0.0.1:8000/

    Read-only, and a store that does not exist is refused. The one writing endpoint
    (POST /api/leagues/NAME/rerate) needs `Authorization: Bearer $ARENA_WEB_TOKEN`; without that
    variable, writes are refused.

    With --play, visitors play games at /play; finished games are stored in --play-league. A store
    that does not exist is then created, with that league, so one command starts a site that
    collects human-vs-model games:   arena web --play --db sqlite:///games.db
    """
    import uvicorn

    from arena.user_errors import UsageError, fail
    from league.db import default_db_url
    from league.store import shown_url, store_exists
    from web.app import create_app

    play_config = None
    if play or play_allow:
        from web.play import PlayConfig

        try:
            if not play:
                raise ValueError("--play-allow needs --play (the Play page is off without it)")
            play_config = PlayConfig.build(play_allow, league=play_league, max_sessions=play_sessions,
                                           max_per_client=play_max_per_client, idle_timeout_s=play_idle)
        except ValueError as exc:
            raise fail(str(exc))
    try:
        # Read-only, a mistyped URL must not become a new empty store. With --play the site writes
        # (visitors' games), so it may start one: a site collecting human games is one command.
        new_store = not store_exists(db)
        if new_store and play_config is None:
            shown = shown_url(db or default_db_url())
            raise fail(f"no league store at {shown} (check --db; `arena league run CONFIG --db {shown}` starts one, "
                       f"as does `arena web --play --db {shown}`)")
        app = create_app(db, cors_origins=cors_origin or None, refresh_s=refresh, play=play_config,
                         bind_host=host, allowed_hosts=allowed_host or None)
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - an unreachable or unreadable store is one line
        detail = str(exc).splitlines()[0][:200] if str(exc) else ""
        # A driver's or SQLAlchemy's message may quote the URL it could not use, password and all (fail redacts it).
        raise fail(f"cannot open the league store: {type(exc).__name__}: {detail}")
    typer.echo(f"arena web: http://{host}:{port}/  (store: {app.state.data.store._safe_url()}{', new' if new_store else ''}; writes {'enabled' if os.environ.get('ARENA_WEB_TOKEN') else 'disabled'})")
    if host.strip() in ("0.0.0.0", "::", "") and not allowed_host:
        # It cannot know the names it is reached by, so the Host check (DNS rebinding) is off.
        typer.echo("note: bound to every interface without --allowed-host: any Host name is admitted; name the server's with --allowed-host")
    if play_config is not None:
        typer.echo(f"play: http://{host}:{port}/play  (opponents: {', '.join(sorted(play_config.allowed_kinds))} and league policies of those kinds; "
                   f"finished games join league {play_config.league})")
    uvicorn.run(app, host=host, port=port, log_level="warning")


def register(app: typer.Typer) -> None:
    app.command("web")(web_command)
