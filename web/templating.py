"""The Jinja2 environment of the pages: autoescape on, undefined names fail loudly, and the filters
the templates use (numbers, percentages, times, capped text, names as one URL segment)."""

from __future__ import annotations

import math
import urllib.parse
from datetime import datetime
from pathlib import Path
from typing import Any

import jinja2
from fastapi.templating import Jinja2Templates

from league.move_stats import seconds_text, usd_text

HERE = Path(__file__).resolve().parent


def make_templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True, undefined=jinja2.StrictUndefined,
    )
    env.filters["num"] = _num
    env.filters["pct"] = lambda v: "–" if v is None else f"{100.0 * v:.1f}%"
    env.filters["when"] = lambda v: "–" if v is None else (v.strftime("%Y-%m-%d %H:%M:%S") if isinstance(v, datetime) else str(v).replace("T", " "))
    env.filters["cap"] = cap
    env.filters["usd"] = usd_text  # the leaderboard's per-move figures read as in the terminal
    env.filters["secs"] = seconds_text
    # Jinja's urlencode keeps "/" as is, so a policy named "../x" made a link the browser folded
    # into another path (404). Names go into URLs as one segment: every reserved character quoted.
    env.filters["urlencode"] = _url_segment
    return Jinja2Templates(env=env)


def _url_segment(value: Any) -> str:
    return urllib.parse.quote(str(value), safe="")


def _num(value: float | None, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return f"{value:.{digits}f}"


def cap(value: str | None, limit: int) -> dict[str, Any]:
    text = value or ""
    return {"text": text[:limit], "cut": max(0, len(text) - limit)}
