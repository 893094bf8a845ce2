"""Training runs: every run, and one run's checkpoints rated against its fixed opponents."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from web.context import WebContext
from web.schemas import CheckpointOut, OpponentOut, RunOut, RunSummaryOut, pair_out


def router(web: WebContext) -> APIRouter:
    router = APIRouter()
    data, templates, base_context = web.data, web.templates, web.base_context

    def run_chart(detail: Any) -> dict[str, Any]:
        points = [{"x": c.step, "y": c.rating, "lo": c.lo, "hi": c.hi} for c in detail.checkpoints if c.rating is not None]
        return {"points": points, "refs": [{"label": o.policy, "y": o.rating} for o in detail.opponents], "x_label": "step"}

    @router.get("/runs", response_class=HTMLResponse, include_in_schema=False)
    def runs_page(request: Request) -> Response:
        return templates.TemplateResponse(request, "runs.html", base_context(request, None, runs=data.runs()))

    @router.get("/api/runs", response_model=list[RunSummaryOut], tags=["training"])
    def api_runs() -> list[RunSummaryOut]:
        """Every training run that registered checkpoints or evaluated them in the store."""
        return [RunSummaryOut(**vars(r)) for r in data.runs()]

    @router.get("/runs/{name:path}", response_class=HTMLResponse, include_in_schema=False)
    def run_page(request: Request, name: str) -> Response:
        detail = data.run(name)
        return templates.TemplateResponse(request, "run.html", base_context(request, None, run=detail, chart=run_chart(detail)))

    @router.get("/api/runs/{name:path}", response_model=RunOut, tags=["training"])
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
                    versus=[pair_out(c.policy, other, pair) for other, pair in sorted(c.versus.items())],
                )
                for c in detail.checkpoints
            ],
            opponents=[OpponentOut(**vars(o)) for o in detail.opponents],
        )

    return router
