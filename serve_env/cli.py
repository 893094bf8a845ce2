"""`arena serve-env`: every playable game as an OpenEnv environment. The CLI calls `register(app)`."""

from __future__ import annotations

import re
from typing import Optional

import typer


def serve_env_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (0.0.0.0 exposes it to the network)."),
    port: int = typer.Option(8010, "--port", min=1, max=65535, help="TCP port."),
    game: str = typer.Option("tictactoe", "--game", help="Game of a reset that names none (e.g. OpenEnv's validator)."),
    opponent: Optional[list[str]] = typer.Option(None, "--opponent", help="Opponent spec of a reset that names none (repeatable, seat order); none = hot-seat."),
    allow: Optional[list[str]] = typer.Option(None, "--allow", help="Policy kinds clients may ask for as opponents, besides bot and random (repeatable: local, hf, openai, http, ...)."),
    db: Optional[str] = typer.Option(None, "--db", help="Store each finished episode as a match of league --league in this store (SQLAlchemy URL); clients may then name league policies as opponents."),
    league: str = typer.Option("serve-env", "--league", help="League that stored episodes join (with --db)."),
    max_sessions: int = typer.Option(64, "--max-sessions", min=1, help="Concurrent WebSocket sessions; more are refused with OpenEnv's CAPACITY_REACHED."),
    idle_timeout: float = typer.Option(300.0, "--idle-timeout", min=1.0, help="Seconds a session may stay silent before it is closed."),
    max_message_kb: int = typer.Option(64, "--max-message-kb", min=1, help="Largest accepted message (KiB)."),
    opponent_timeout: float = typer.Option(60.0, "--opponent-timeout", min=0.1, help="Seconds per opponent move; slower opponents fall under the game's invalid-move rule."),
    allowed_host: Optional[list[str]] = typer.Option(None, "--allowed-host", help="Host name clients may reach the server by, besides the bound address (repeatable; e.g. behind a proxy). Other Host headers are refused (DNS rebinding)."),
    allow_origin: Optional[list[str]] = typer.Option(None, "--allow-origin", help="Web page origin (scheme://host:port) allowed to open /ws and POST (repeatable). Default: none; tools that send no Origin pass."),
    max_sessions_per_client: int = typer.Option(8, "--max-sessions-per-client", min=1, help="Concurrent sessions one client address may hold (a stateless POST /reset holds one while it runs)."),
    max_reply_kb: int = typer.Option(1024, "--max-reply-kb", min=1, help="Largest reply the server sends (KiB); a larger one ends its session with an error."),
    game_call_timeout: float = typer.Option(5.0, "--game-call-timeout", min=0.1, help="Seconds one call into a game's code may take; past it the session's episode ends with an error."),
    max_view_kb: int = typer.Option(512, "--max-view-kb", min=1, help="Largest view (observation text and legal moves, KiB) a game may hand a client; a larger one ends the episode."),
) -> None:
    """Serve every playable game (native and textarena:) over OpenEnv's protocol (WS /ws, /reset, /step, /state, /schema).

    Example: arena serve-env --port 8010 --opponent bot   then connect with openenv-core's GenericEnvClient(base_url="http://127.0.0.1:8010")
    """
    import uvicorn

    from arena.policy import PolicySpec, PolicySpecError
    from arena.redaction import redact
    from arena.user_errors import fail
    from league.opponent_pool import allowed_kinds
    from serve_env.app import build_app
    from serve_env.environment import ServeConfig

    try:
        allowed = allowed_kinds(allow or [], "--allow")
    except ValueError as exc:
        raise fail(str(exc))
    config = ServeConfig(
        game=game, opponents=list(opponent or []), allowed_kinds=allowed,
        max_sessions=max_sessions, idle_timeout=idle_timeout, max_message_bytes=max_message_kb * 1024,
        opponent_timeout=opponent_timeout, bind_host=host, allowed_hosts=list(allowed_host or []),
        allowed_origins=list(allow_origin or []), max_sessions_per_client=max_sessions_per_client,
        max_reply_bytes=max_reply_kb * 1024, game_call_timeout=game_call_timeout, max_view_bytes=max_view_kb * 1024,
    )
    for origin in config.allowed_origins:
        if not re.fullmatch(r"https?://[^/\s]+", origin.strip()):
            raise fail(f"--allow-origin {origin!r}: an origin is scheme://host[:port], e.g. http://127.0.0.1:3000")
    for spec in config.opponents:
        try:
            PolicySpec.parse(spec)
        except PolicySpecError as exc:
            raise fail(f"--opponent {spec!r}: {exc}")
    if db:
        from league.outside_play import OutsidePlay
        from league.store import Store

        try:
            config.outside = OutsidePlay(Store(db), league)
        except Exception as exc:  # noqa: BLE001 - an unreachable store is one line
            raise fail(f"cannot open the league store: {type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
    pool = config.opponent_pool()
    for spec in config.opponents:
        refused = pool.refusal(spec)
        if refused:
            raise fail(f"--opponent {spec!r}: {refused}")
    app = build_app(config)
    typer.echo(redact(f"arena serve-env: ws://{host}:{port}/ws  (default game {game}; opponents {', '.join(config.opponents) or 'none (hot-seat)'}; "
                      f"{'storing in league ' + league if config.outside else 'not storing episodes'})"))
    try:
        # ws_max_size above our own limit, so an oversized message gets our clear error, not a dropped socket.
        uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=4 * config.max_message_bytes)
    finally:
        if config.outside is not None:
            config.outside.flush()


def register(app: typer.Typer) -> None:
    app.command("serve-env")(serve_env_command)
