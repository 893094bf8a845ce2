"""Evaluations: every policy scored on a frozen suite (`arena eval suite`), and each report card,
read from the evaluation leagues in the store (evaluation/suite_evaluation.py)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from evaluation.suite_evaluation import StoredEvaluation, stored_card, stored_evaluations
from web.context import WebContext


def _find(evaluations: list[StoredEvaluation], policy: str, suite: str | None, quick: bool) -> StoredEvaluation:
    chosen = [e for e in evaluations if e.policy == policy and (suite is None or e.suite == suite) and e.quick == quick]
    if not chosen:
        raise HTTPException(404, f"no {'quick ' if quick else ''}evaluation of policy {policy!r}{f' on {suite}' if suite else ''} in this store")
    return chosen[-1]


def router(web: WebContext) -> APIRouter:
    router = APIRouter()
    store, templates, base_context = web.store, web.templates, web.base_context

    def cards() -> list[dict[str, Any]]:
        out = []
        for evaluation in stored_evaluations(store):
            card = stored_card(store, evaluation)
            if card is not None:
                out.append({"policy": evaluation.policy, "suite": evaluation.suite, "quick": evaluation.quick, "card": card})
        return out

    @router.get("/evals", response_class=HTMLResponse, include_in_schema=False)
    def evals_page(request: Request) -> Response:
        return templates.TemplateResponse(request, "evals.html", base_context(request, None, evals=cards()))

    @router.get("/evals/{policy:path}", response_class=HTMLResponse, include_in_schema=False)
    def eval_page(request: Request, policy: str, suite: str | None = None, quick: bool = False) -> Response:
        card = stored_card(store, _find(stored_evaluations(store), policy, suite, quick))
        if card is None:
            raise HTTPException(404, f"suite {suite!r} is not shipped by this version")
        references = sorted({ref for game in card["games"] for ref in game["vs"]})
        rows = [*card["games"], {**card["overall"], "game": "overall"}]
        return templates.TemplateResponse(request, "eval.html", base_context(request, None, card=card, rows=rows, references=references))

    @router.get("/api/evals", tags=["evals"])
    def api_evals() -> list[dict[str, Any]]:
        """Every stored evaluation's report card (schema: docs/eval.md)."""
        return cards()

    @router.get("/api/evals/{policy:path}", tags=["evals"])
    def api_eval(policy: str, suite: str | None = None, quick: bool = False) -> dict[str, Any]:
        """One policy's report card on a suite (the latest suite version when none is given)."""
        card = stored_card(store, _find(stored_evaluations(store), policy, suite, quick))
        if card is None:
            raise HTTPException(404, f"suite {suite!r} is not shipped by this version")
        return card

    return router
