"""One policy: its page and its JSON (rating over time, per-game ratings and statistics, head to
head, and for an LLM the harness its spec names: sampler, parser, prompt, reasoning budget)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from arena.llm.harness import describe_spec
from league.rating_display import estimate
from web.context import WebContext
from web.schemas import PolicyOut, System, pair_out, point_out, stats_dict


def router(web: WebContext) -> APIRouter:
    router = APIRouter()
    data, templates, base_context = web.data, web.templates, web.base_context

    @router.get("/policies/{name:path}", response_class=HTMLResponse, include_in_schema=False)
    def policy_page(request: Request, name: str, league: str | None = None, system: System = "trueskill") -> Response:
        league_id, league_name = data.league(league)
        info = data.policy(league_id, name, system)
        # The line is the number the band is the interval of (TrueSkill: mu, not mu - 3 sigma).
        chart = [{"x": p.after_matches, "y": estimate(system, p.rating, p.lo, p.hi), "lo": p.lo, "hi": p.hi} for p in info["history"]]
        harness = describe_spec(info["spec"])
        return templates.TemplateResponse(request, "policy.html", base_context(request, league_name, p=info, system=system, chart=chart, harness=harness))

    @router.get("/api/policies/{name:path}", response_model=PolicyOut, tags=["policies"])
    def api_policy(name: str, league: str | None = None, system: System = "trueskill") -> PolicyOut:
        """One policy: rating over time, per-game ratings and statistics, head-to-head records."""
        league_id, league_name = data.league(league)
        info = data.policy(league_id, name, system)
        return PolicyOut(
            league=league_name, name=name, spec=info["spec"], harness=describe_spec(info["spec"]), system=system,
            rating=point_out(info["overall"]) if info["overall"] else None, history=[point_out(p) for p in info["history"]],
            stats=stats_dict(info["stats"]),
            per_game=[{"game": g["game"], "rating": point_out(g["standing"]).model_dump() if g["standing"] else None,
                       "stats": stats_dict(g["stats"]) if g["stats"] else None} for g in info["per_game"]],
            opponents=[pair_out(name, b, pair) for b, pair in info["opponents"]],
        )

    return router
