"""The web leaderboard: FastAPI, server-rendered Jinja2 pages (autoescape on) and a JSON API.

Read-only by default. The one writing endpoint (rebuilding a league's rating snapshots through
league.snapshots.rerate) needs `Authorization: Bearer <token>` matching the environment variable
named by `write_token_env`; with that variable unset, writes are refused. CORS stays off unless
`cors_origins` is given. Every page carries a strict Content-Security-Policy (scripts only from
/static), as a second wall behind the escaping.
"""

from __future__ import annotations

import csv
import hmac
import io
import math
import os
from datetime import date, datetime, time as dtime, timedelta, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

import jinja2
from fastapi import Depends, FastAPI, HTTPException, Path as PathParam, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from league.store import Store
from web import queries as q
from web.data import SYSTEM_LABELS, NotFound, WebData

HERE = Path(__file__).resolve().parent
System = Literal["trueskill", "elo", "bt"]
Result = Literal["win", "draw", "loss"]
MatchId = Annotated[int, PathParam(ge=1, le=2**63 - 1, description="the match's id")]  # a database integer
Status = Literal["finished", "aborted", "running", "scheduled", "abandoned"]
MAX_REPLY_CHARS = 2000  # shown per turn; longer replies are cut with a note (the API has the full text)
MAX_OBSERVATION_CHARS = 6000
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


# ---- API models (the OpenAPI schema) ---------------------------------------------------------------
class LeaderboardEntry(BaseModel):
    rank: int
    policy: str
    rating: float
    lo: float
    hi: float
    games: int
    wins: int
    draws: int
    losses: int
    matches: int
    invalid_rate: float | None
    avg_tokens: float | None
    avg_latency_ms: float | None
    failures: int
    last_played: str | None


class LeaderboardOut(BaseModel):
    league: str
    game: str
    system: System
    from_snapshots: bool
    rows: list[LeaderboardEntry]


class MatchOut(BaseModel):
    id: int
    key: str
    game_id: str
    seats: list[str]
    status: str
    ranks: list[int]
    scores: list[float]
    reason: str
    winners: list[str]
    draw: bool
    seed: int
    attempts: int
    duration_s: float | None
    scheduled_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None


class MatchPage(BaseModel):
    league: str
    total: int
    page: int
    per_page: int
    matches: list[MatchOut]


class TurnOut(BaseModel):
    index: int
    player: int
    policy: str
    turn: int
    attempt: int
    observation: str
    legal_moves: list[str] | None
    raw: str
    action: str | None
    valid: bool
    feedback: str
    penalty: str | None
    error: str | None
    latency_s: float
    prompt_tokens: int | None
    completion_tokens: int | None


class MatchDetail(MatchOut):
    turns: list[TurnOut]
    final_views: list[str]


class PairOut(BaseModel):
    row: str
    column: str
    wins: int
    draws: int
    losses: int
    games: int
    win_rate: float | None


class HeadToHeadOut(BaseModel):
    league: str
    game: str
    policies: list[str]
    pairs: list[PairOut]


class HistoryPoint(BaseModel):
    after_matches: int
    rating: float
    lo: float
    hi: float
    rank: int
    games: int


class PolicyOut(BaseModel):
    league: str
    name: str
    spec: str
    system: System
    rating: HistoryPoint | None
    history: list[HistoryPoint]
    stats: dict[str, Any]
    per_game: list[dict[str, Any]]
    opponents: list[PairOut]


class LiveOut(BaseModel):
    league: str
    counts: dict[str, int]
    running: list[MatchOut]
    finished: list[MatchOut]
    standings: list[HistoryPoint | dict[str, Any]]


class LeagueOut(BaseModel):
    name: str
    games: list[str]


class RerateOut(BaseModel):
    league: str
    snapshot_rows: int


class RunSummaryOut(BaseModel):
    name: str
    base: str
    checkpoints: int
    evaluated: int
    last_step: int


class CheckpointOut(BaseModel):
    step: int
    policy: str
    spec: str
    eval_league: str | None
    rating: float | None
    lo: float | None
    hi: float | None
    rank: int | None
    wins: int
    draws: int
    losses: int
    games: int
    score: float | None  # wins + draws/2 over games, against the fixed opponents
    versus: list[PairOut]


class OpponentOut(BaseModel):
    policy: str
    rating: float
    lo: float
    hi: float
    rank: int


class RunOut(BaseModel):
    name: str
    base: str
    system: Literal["bt"] = "bt"
    matches: int
    checkpoints: list[CheckpointOut]
    opponents: list[OpponentOut]


# ---- helpers ---------------------------------------------------------------------------------------
def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True, undefined=jinja2.StrictUndefined,
    )
    env.filters["num"] = _num
    env.filters["pct"] = lambda v: "–" if v is None else f"{100.0 * v:.1f}%"
    env.filters["when"] = lambda v: "–" if v is None else (v.strftime("%Y-%m-%d %H:%M:%S") if isinstance(v, datetime) else str(v).replace("T", " "))
    env.filters["cap"] = _cap
    return Jinja2Templates(env=env)


def _num(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.{digits}f}"


def _cap(value: str | None, limit: int) -> dict[str, Any]:
    text = value or ""
    return {"text": text[:limit], "cut": max(0, len(text) - limit)}


def _csv_cell(value: Any) -> Any:
    """Spreadsheets run cells that start with = + - @ as formulas: neutralise names that do."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _point(st: q.Standing) -> HistoryPoint:
    return HistoryPoint(after_matches=st.after_matches, rating=st.rating, lo=st.lo, hi=st.hi, rank=st.rank, games=st.games)


def _pair_out(a: str, b: str, pair: q.Pair) -> PairOut:
    return PairOut(row=a, column=b, wins=pair.wins, draws=pair.draws, losses=pair.losses, games=pair.games, win_rate=pair.win_rate)


def _stats_dict(stats: q.PolicyStats) -> dict[str, Any]:
    return {
        "games": stats.games, "wins": stats.wins, "draws": stats.draws, "losses": stats.losses, "matches": stats.matches,
        "moves": stats.moves, "invalid": stats.invalid, "invalid_rate": stats.invalid_rate, "failures": stats.failures,
        "penalties": stats.penalties, "avg_tokens": stats.avg_tokens,
        "avg_latency_ms": None if stats.avg_latency_s is None else stats.avg_latency_s * 1000.0, "cost_usd": stats.cost_usd,
        "last_played": stats.last_played.isoformat(timespec="seconds") if stats.last_played else None,
    }


def _day_range(since: date | None, until: date | None) -> tuple[datetime | None, datetime | None]:
    start = datetime.combine(since, dtime.min, tzinfo=timezone.utc) if since else None
    end = None
    if until and until < date.max:  # inclusive day; the last representable day has no upper bound
        end = datetime.combine(until + timedelta(days=1), dtime.min, tzinfo=timezone.utc)
    return start, end


class SecurityHeaders:
    """Adds the CSP and friends to every response (plain ASGI: no per-request task overhead)."""

    HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin")]

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                message["headers"] = list(message.get("headers", [])) + [h for h in self.HEADERS if h[0] not in present]
            await send(message)

        await self.app(scope, receive, with_headers)


def create_app(db_url: str | None = None, write_token_env: str = "ARENA_WEB_TOKEN", cors_origins: list[str] | None = None, refresh_s: float = 2.0) -> FastAPI:
    """The app over the league store at `db_url` (default: $ARENA_DB, else sqlite:///arena.db)."""
    store = Store(db_url)
    data = WebData(store, refresh_s)
    templates = _templates()
    write_token = os.environ.get(write_token_env) or None  # held in memory only, never logged
    app = FastAPI(
        title="LLM arena leaderboard", version="1.0",
        description="Read-only JSON API over a league store: standings, head-to-head, matches, replays, live progress.",
        openapi_url="/api/openapi.json", docs_url=None, redoc_url=None,  # the doc UIs load scripts from a CDN
    )
    app.state.data = data
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    if cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["GET"], allow_headers=["Authorization"])

    app.add_middleware(SecurityHeaders)

    def is_api(request: Request) -> bool:
        return request.url.path.startswith("/api/")

    def error_page(request: Request, status: int, message: str) -> Response:
        if is_api(request):
            return JSONResponse({"detail": message}, status_code=status)
        return templates.TemplateResponse(request, "error.html", {**base_context(request, None), "status": status, "message": message}, status_code=status)

    @app.exception_handler(NotFound)
    async def not_found(request: Request, exc: NotFound) -> Response:
        return error_page(request, 404, str(exc))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        response = error_page(request, exc.status_code, str(exc.detail))
        for key, value in (exc.headers or {}).items():
            response.headers[key] = value
        return response

    @app.exception_handler(404)
    async def no_route(request: Request, exc: Exception) -> Response:
        return error_page(request, 404, getattr(exc, "detail", "not found"))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("query", "path"))
        message = f"{where}: {first.get('msg', 'invalid value')}" if where else str(first.get("msg", "invalid request"))
        if is_api(request):
            return JSONResponse({"detail": message}, status_code=422)
        return error_page(request, 400, message)

    def base_context(request: Request, league: str | None, **extra: Any) -> dict[str, Any]:
        try:
            names = data.league_names()
        except Exception:  # noqa: BLE001 - an error page must render even when the store cannot
            names = []
        return {"league": league, "leagues": names, "systems": SYSTEM_LABELS, **extra}

    def require_write(request: Request) -> None:
        if write_token is None:
            raise HTTPException(403, f"writes are disabled: start the server with ${write_token_env} set")
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given:
            raise HTTPException(401, "this endpoint needs Authorization: Bearer <token>", headers={"WWW-Authenticate": "Bearer"})
        if not hmac.compare_digest(given.encode(), write_token.encode()):
            raise HTTPException(403, "wrong token")

    # ---- trivial -------------------------------------------------------------------------------
    @app.get("/healthz", response_class=PlainTextResponse, include_in_schema=False)
    async def healthz() -> str:
        return "ok"

    # ---- leaderboard -----------------------------------------------------------------------------
    leaderboard_template = templates.env.get_template("leaderboard.html")
    rendered: dict[tuple[str, str, str], tuple[Any, bytes]] = {}
    def leaderboard_rows(league: str | None, game: str | None, system: str) -> tuple[str, str, list[str], list, bool, list[str]]:
        league_id, league_name = data.league(league)
        scope = data.check_game(league_id, game)
        rows, from_snapshots = data.leaderboard(league_id, scope, system)
        answer = (league_name, scope, data.games(league_id), rows, from_snapshots, data.league_names())
        data.cache.values[(league_id, ("page", league or "", game or "", system))] = (data.version(league_id), answer)
        return answer

    async def fast_leaderboard(league: str | None, game: str | None, system: str) -> tuple[str, str, list[str], list, bool, list[str]]:
        # Between data changes the answer is in memory: serve it without a thread hop or a query.
        hit = data.peek(league, ("page", league or "", game or "", system))
        if hit is not None:
            return hit
        return await run_in_threadpool(leaderboard_rows, league, game, system)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def leaderboard_page(request: Request, league: str | None = None, game: str | None = None, system: System = "trueskill") -> Response:
        answer = await fast_leaderboard(league, game, system)
        key = (league or "", game or "", system)
        hit = rendered.get(key)
        if hit is None or hit[0] is not answer:  # the page is rendered once per cached answer
            league_name, scope, games, rows, from_snapshots, names = answer
            html = leaderboard_template.render({
                "league": league_name, "leagues": names, "systems": SYSTEM_LABELS,
                "rows": rows, "game": scope, "games": games, "system": system, "from_snapshots": from_snapshots,
            })
            hit = rendered[key] = (answer, html.encode())
        return Response(hit[1], media_type="text/html; charset=utf-8")

    @app.get("/api/leagues", response_model=list[LeagueOut], tags=["leagues"])
    def api_leagues() -> list[LeagueOut]:
        """Every league in the store, with the games it played."""
        out = []
        for name in data.league_names():
            league_id, _ = data.league(name)
            out.append(LeagueOut(name=name, games=data.games(league_id)))
        return out

    @app.get("/api/leaderboard", response_model=LeaderboardOut, tags=["leaderboard"])
    async def api_leaderboard(league: str | None = None, game: str | None = None, system: System = "trueskill") -> LeaderboardOut:
        """Standings of a league (newest by default), overall or for one game."""
        league_name, scope, _, rows, from_snapshots, _ = await fast_leaderboard(league, game, system)
        return LeaderboardOut(league=league_name, game=scope, system=system, from_snapshots=from_snapshots, rows=[LeaderboardEntry(**vars(r)) for r in rows])

    @app.get("/api/leaderboard.csv", response_class=PlainTextResponse, tags=["leaderboard"])
    async def api_leaderboard_csv(league: str | None = None, game: str | None = None, system: System = "trueskill") -> Response:
        """The same standings as CSV (cells that a spreadsheet would run as formulas are quoted)."""
        league_name, scope, _, rows, _, _ = await fast_leaderboard(league, game, system)
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        fields = list(LeaderboardEntry.model_fields)
        writer.writerow(fields)
        for row in rows:
            writer.writerow([_csv_cell(getattr(row, f)) for f in fields])
        filename = f"leaderboard-{system}-{scope or 'all'}.csv".replace('"', "")
        return Response(buffer.getvalue(), media_type="text/csv; charset=utf-8", headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    # ---- policy --------------------------------------------------------------------------------
    @app.get("/policies/{name:path}", response_class=HTMLResponse, include_in_schema=False)
    def policy_page(request: Request, name: str, league: str | None = None, system: System = "trueskill") -> Response:
        league_id, league_name = data.league(league)
        info = data.policy(league_id, name, system)
        chart = [{"x": p.after_matches, "y": p.rating, "lo": p.lo, "hi": p.hi} for p in info["history"]]
        return templates.TemplateResponse(request, "policy.html", base_context(request, league_name, p=info, system=system, chart=chart))

    @app.get("/api/policies/{name:path}", response_model=PolicyOut, tags=["policies"])
    def api_policy(name: str, league: str | None = None, system: System = "trueskill") -> PolicyOut:
        """One policy: rating over time, per-game ratings and statistics, head-to-head records."""
        league_id, league_name = data.league(league)
        info = data.policy(league_id, name, system)
        return PolicyOut(
            league=league_name, name=name, spec=info["spec"], system=system,
            rating=_point(info["overall"]) if info["overall"] else None, history=[_point(p) for p in info["history"]],
            stats=_stats_dict(info["stats"]),
            per_game=[{"game": g["game"], "rating": _point(g["standing"]).model_dump() if g["standing"] else None,
                       "stats": _stats_dict(g["stats"]) if g["stats"] else None} for g in info["per_game"]],
            opponents=[_pair_out(name, b, pair) for b, pair in info["opponents"]],
        )

    # ---- head to head ----------------------------------------------------------------------------
    @app.get("/h2h", response_class=HTMLResponse, include_in_schema=False)
    def h2h_page(request: Request, league: str | None = None, game: str | None = None, system: System = "trueskill") -> Response:
        league_id, league_name = data.league(league)
        scope = data.check_game(league_id, game)
        order, table = data.matrix(league_id, scope, system)
        return templates.TemplateResponse(request, "h2h.html", base_context(
            request, league_name, order=order, table=table, game=scope, games=data.games(league_id), system=system,
        ))

    @app.get("/api/h2h", response_model=HeadToHeadOut, tags=["leaderboard"])
    def api_h2h(league: str | None = None, game: str | None = None, system: System = "trueskill") -> HeadToHeadOut:
        """Win rate of every row policy against every column policy (draws count half) and counts."""
        league_id, league_name = data.league(league)
        scope = data.check_game(league_id, game)
        order, table = data.matrix(league_id, scope, system)
        return HeadToHeadOut(league=league_name, game=scope, policies=order, pairs=[_pair_out(a, b, p) for (a, b), p in sorted(table.items())])

    # ---- matches --------------------------------------------------------------------------------
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

    @app.get("/matches", response_class=HTMLResponse, include_in_schema=False)
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
        return templates.TemplateResponse(request, "matches.html", base_context(
            request, league_name, rows=rows, total=total, page=page, pages=pages, per_page=per_page, filters=params,
            games=data.games(league_id), policies=sorted(data.stats(league_id).get("", {})),
        ))

    @app.get("/api/matches", response_model=MatchPage, tags=["matches"])
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

    @app.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def match_page(request: Request, match_id: MatchId, turn: int = Query(1, ge=1, le=1_000_000)) -> Response:
        row, turns = load_match(match_id)
        league_name = next((l.name for l in store.leagues() if l.id == row.league_id), None)
        shown = [
            {"t": t, "obs": _cap(t.observation, MAX_OBSERVATION_CHARS), "raw": _cap(t.raw, MAX_REPLY_CHARS), "action": _cap(t.action, 500),
             "feedback": _cap(t.feedback, 1000), "error": _cap(t.error, 1000)}
            for t in turns
        ]
        current = min(turn, max(1, len(turns)))
        return templates.TemplateResponse(request, "match.html", base_context(
            request, league_name, m=q.match_summary(row), turns=shown, current=current,
            final_views=[_cap(v, MAX_OBSERVATION_CHARS) for v in (row.final_views or [])],
        ))

    @app.get("/api/matches/{match_id}", response_model=MatchDetail, tags=["matches"])
    def api_match(match_id: MatchId) -> MatchDetail:
        """One match with every turn (replies as stored: capped by the match driver)."""
        row, turns = load_match(match_id)
        return MatchDetail(
            **q.match_summary(row), final_views=list(row.final_views or []),
            turns=[TurnOut(**{f: getattr(t, f) for f in TurnOut.model_fields}) for t in turns],
        )

    # ---- live ------------------------------------------------------------------------------------
    @app.get("/live", response_class=HTMLResponse, include_in_schema=False)
    def live_page(request: Request, league: str | None = None) -> Response:
        league_id, league_name = data.league(league)
        return templates.TemplateResponse(request, "live.html", base_context(request, league_name, live=data.live(league_id)))

    @app.get("/api/live", response_model=LiveOut, tags=["live"])
    def api_live(league: str | None = None) -> LiveOut:
        """What the league is doing now: matches by status, those in flight, the newest results
        and the newest standings snapshot (TrueSkill). Poll it every few seconds."""
        league_id, league_name = data.league(league)
        live = data.live(league_id)
        return LiveOut(
            league=league_name, counts=live["counts"], running=[MatchOut(**m) for m in live["running"]],
            finished=[MatchOut(**m) for m in live["finished"]],
            standings=[{"policy": st.policy, **_point(st).model_dump()} for st in live["standings"]],
        )

    # ---- training runs ---------------------------------------------------------------------------
    def run_chart(detail: Any) -> dict[str, Any]:
        points = [{"x": c.step, "y": c.rating, "lo": c.lo, "hi": c.hi} for c in detail.checkpoints if c.rating is not None]
        return {"points": points, "refs": [{"label": o.policy, "y": o.rating} for o in detail.opponents], "x_label": "step"}

    @app.get("/runs", response_class=HTMLResponse, include_in_schema=False)
    def runs_page(request: Request) -> Response:
        return templates.TemplateResponse(request, "runs.html", base_context(request, None, runs=data.runs()))

    @app.get("/api/runs", response_model=list[RunSummaryOut], tags=["training"])
    def api_runs() -> list[RunSummaryOut]:
        """Every training run that registered checkpoints or evaluated them in the store."""
        return [RunSummaryOut(**vars(r)) for r in data.runs()]

    @app.get("/runs/{name:path}", response_class=HTMLResponse, include_in_schema=False)
    def run_page(request: Request, name: str) -> Response:
        detail = data.run(name)
        return templates.TemplateResponse(request, "run.html", base_context(request, None, run=detail, chart=run_chart(detail)))

    @app.get("/api/runs/{name:path}", response_model=RunOut, tags=["training"])
    def api_run(name: str) -> RunOut:
        """A run's checkpoints by step with one Bradley-Terry fit (Elo scale, 95% CI) pooled over
        all its evaluation leagues (RUN/eval/step-K), and the fixed opponents on the same scale."""
        detail = data.run(name)
        return RunOut(
            name=detail.name, base=detail.base, matches=detail.matches,
            checkpoints=[
                CheckpointOut(
                    step=c.step, policy=c.policy, spec=c.spec, eval_league=c.league, rating=c.rating, lo=c.lo, hi=c.hi, rank=c.rank,
                    wins=c.record.wins, draws=c.record.draws, losses=c.record.losses, games=c.record.games, score=c.record.win_rate,
                    versus=[_pair_out(c.policy, other, pair) for other, pair in sorted(c.versus.items())],
                )
                for c in detail.checkpoints
            ],
            opponents=[OpponentOut(**vars(o)) for o in detail.opponents],
        )

    # ---- the one write ---------------------------------------------------------------------------
    @app.post("/api/leagues/{name}/rerate", response_model=RerateOut, tags=["leagues"], dependencies=[Depends(require_write)])
    def api_rerate(name: str) -> RerateOut:
        """Rebuild a league's rating snapshots from its match log (league.snapshots.rerate).
        Needs `Authorization: Bearer $ARENA_WEB_TOKEN`."""
        from league.snapshots import rerate

        league_id, league_name = data.league(name)
        return RerateOut(league=league_name, snapshot_rows=rerate(store, league_id))

    @app.on_event("shutdown")
    def close_store() -> None:
        store.close()

    return app


__all__ = ["create_app", "MAX_REPLY_CHARS"]
