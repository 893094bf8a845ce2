"""How errors answer: JSON `{"detail": ...}` under /api/, the error page elsewhere; a bad query
parameter is one line naming it (422 in the API, 400 on a page)."""

from __future__ import annotations

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response

from web.context import WebContext, is_api
from web.data import NotFound


def add_error_handlers(app: FastAPI, web: WebContext) -> None:
    error_page = web.error_page

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
