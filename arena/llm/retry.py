"""Retries for calls to model providers: exponential backoff with jitter, Retry-After, a hard cap.

Retried: HTTP 408/409/429/5xx, connection errors and timeouts (the openai SDK's exception types,
which LiteLLM's subclass, plus asyncio/httpx timeouts). Anything else (400 bad request, 401, 404)
fails at once. When the attempts or the total time run out, `PolicyFailure` is raised, so the
match driver records a provider failure and the game's invalid-move rule applies.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, TypeVar

from arena.policy import PolicyFailure
from arena.redaction import redact

T = TypeVar("T")
RETRY_STATUSES = frozenset({408, 409, 429}) | frozenset(range(500, 600))
MAX_RETRY_AFTER_S = 600.0  # a server asking for longer is treated as "not within the cap"


@dataclass(frozen=True)
class RetryConfig:
    max_retries: int = 4  # retries after the first attempt
    budget_s: float = 180.0  # total seconds for all attempts and waits of one move
    timeout_s: float = 60.0  # per attempt
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0


@dataclass
class RetryStats:
    attempts: int = 0
    waited_s: float = 0.0
    errors: list[str] = field(default_factory=list)  # short labels: "429", "500", "timeout", ...


@dataclass(frozen=True)
class Verdict:
    retryable: bool
    label: str  # short, secret-free description of the error
    retry_after_s: float | None = None


def classify(exc: BaseException) -> Verdict:
    """Whether `exc` is worth retrying, a short label, and the server's Retry-After if any."""
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return Verdict(True, "timeout")
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx is a dependency
        httpx = None  # type: ignore[assignment]
    if httpx is not None and isinstance(exc, httpx.TimeoutException):
        return Verdict(True, "timeout")
    if httpx is not None and isinstance(exc, httpx.TransportError):
        return Verdict(True, "connection")
    try:
        import openai
    except ImportError:  # pragma: no cover - openai is a dependency
        openai = None  # type: ignore[assignment]
    if openai is not None:
        if isinstance(exc, openai.APITimeoutError):
            return Verdict(True, "timeout")
        if isinstance(exc, openai.APIConnectionError):
            return Verdict(True, "connection")
    status = _status_code(exc)
    if status is not None:
        return Verdict(status in RETRY_STATUSES, str(status), retry_after(exc))
    return Verdict(False, type(exc).__name__)


def _status_code(exc: BaseException) -> int | None:
    for value in (getattr(exc, "status_code", None), getattr(getattr(exc, "response", None), "status_code", None)):
        if isinstance(value, int) and 100 <= value <= 599:
            return value
    return None


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), if it said."""
    header_sources: list[Any] = [
        getattr(getattr(exc, "response", None), "headers", None),
        getattr(exc, "headers", None),
        getattr(exc, "litellm_response_headers", None),
    ]
    for headers in header_sources:
        if not headers:
            continue
        try:
            lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
        except (TypeError, ValueError):
            continue
        seconds = parse_retry_after(lowered.get("retry-after-ms"), milliseconds=True)
        if seconds is None:
            seconds = parse_retry_after(lowered.get("retry-after"))
        if seconds is not None:
            return seconds
    return None


def parse_retry_after(value: str | None, *, milliseconds: bool = False, now: float | None = None) -> float | None:
    """A Retry-After value (delta seconds or an HTTP date) as seconds from now; None if unusable."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value) / (1000.0 if milliseconds else 1.0)
    except ValueError:
        if milliseconds:
            return None
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_S)  # a date in the past means "now"


def backoff_delay(retry: int, config: RetryConfig, rng: random.Random) -> float:
    """Exponential backoff with "equal jitter": half fixed, half random, capped."""
    ceiling = min(config.max_delay_s, config.base_delay_s * (2**retry))
    return ceiling / 2 + rng.uniform(0, ceiling / 2)


async def call_with_retries(
    call: Callable[[float], Awaitable[T]],
    config: RetryConfig,
    *,
    what: str = "provider",
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
    rng: random.Random | None = None,
) -> tuple[T, RetryStats]:
    """Run `call(timeout_s)` until it succeeds, retrying retryable errors within the caps.

    `call` receives the seconds it may take (the per-attempt timeout, shortened to what is left
    of the total budget) and is also cut off at that time here.
    """
    rng = rng or random.Random()
    stats = RetryStats()
    start = clock()
    while True:
        remaining = config.budget_s - (clock() - start)
        if remaining <= 0:
            raise PolicyFailure(f"{what}: gave up after {stats.attempts} attempt(s) in {config.budget_s:g}s ({', '.join(stats.errors) or 'no answer'})")
        stats.attempts += 1
        attempt_timeout = min(config.timeout_s, remaining)
        try:
            result = await asyncio.wait_for(call(attempt_timeout), attempt_timeout)
            return result, stats
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            verdict = classify(exc)
            stats.errors.append(verdict.label)
            if not verdict.retryable:
                raise PolicyFailure(f"{what}: {verdict.label}: {_one_line(exc)}") from exc
            if stats.attempts > config.max_retries:
                raise PolicyFailure(
                    f"{what}: gave up after {stats.attempts} attempt(s) ({', '.join(stats.errors)})"
                ) from exc
            delay = backoff_delay(stats.attempts - 1, config, rng)
            if verdict.retry_after_s is not None:
                delay = max(delay, verdict.retry_after_s)  # never earlier than the server asked
            left = config.budget_s - (clock() - start)
            if delay >= left:
                raise PolicyFailure(
                    f"{what}: next retry in {delay:.1f}s would pass the {config.budget_s:g}s cap ({', '.join(stats.errors)})"
                ) from exc
            stats.waited_s += delay
            await sleep(delay)


def _one_line(exc: BaseException) -> str:
    """The provider's message, first line, secrets masked (it may echo the key or the URL)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return redact(text)[:300]
