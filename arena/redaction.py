"""The one redaction function between secrets and every place text ends up.

Secrets (API keys, tokens, passwords) come only from environment variables. Specs, URLs and
provider error messages are still shown, logged, stored, exported and served, and any of them may
carry a secret by accident: a key pasted into a spec (`api_key=sk-...`), a password in a URL's
user-info (`http://user:pass@host/v1`), a provider that echoes the request's `Authorization`
header in its error. Everything that writes such text to a sink passes it through `redact` (or
`redact_data` for structured values) first, so no new code path has to remember the rules.

What is replaced by `***`:
- URL user-info:                     http://user:pass@host  -> http://***@host
- secret-named parameters:           api_key=..., token=..., ?key=..., "password": "..."
- credential headers:                Authorization: Bearer ..., x-api-key: ...
- key-shaped values anywhere:        sk-..., Bearer ..., ghp_..., hf_..., AKIA..., JWTs
- the literal values of secret environment variables (OPENAI_API_KEY, *_TOKEN, ...) and of every
  key read through `api_key_env=` (`remember_secret`), so a provider echoing a key is caught
  whatever its shape.

Text written at volume (every turn's observation, raw reply, action, feedback, reasoning and
meta) goes through `known_secret_masker` instead: it masks the literal secret values only, keys
of mappings included, and leaves everything else as it was, so a game's text that merely looks
like `key: x` is recorded as the game wrote it, and a turn costs microseconds.

`api_key_env=MY_KEY` names a variable, not a secret: it is kept. `find_secrets` tells a spec
checker what kind of literal secret a text carries, so specs holding one are refused up front.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Any, Callable

MASK = "***"

# Parameter / field names that hold a secret. A name matches as a whole (`max_tokens` and
# `api_key_env` do not; `api_key`, `openai_api_key`, `x-api-key`, `access_token` do).
_SECRET_WORD = r"(?:api[_-]?key|apikey|key|token|secret|password|passwd|pwd|passphrase|auth|authorization|credentials?|signature|sig|cookie)"
_SECRET_NAME = re.compile(rf"(?:[A-Za-z0-9]+[_-])*{_SECRET_WORD}", re.IGNORECASE)

# Names of environment variables whose values are secrets (their values are masked literally).
_SECRET_ENV_NAME = re.compile(r"key|token|secret|passw|credential|auth", re.IGNORECASE)
_MIN_LITERAL = 8  # shorter values (e.g. "1", "true") would mask ordinary text

_RULES: list[tuple[str, re.Pattern[str], str]] = [
    # scheme://user:pass@host -> scheme://***@host (the user name can itself be a token)
    ("user-info in a URL", re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)(?!\*\*\*@)[^\s/?#@\"'<>]+@"), rf"\g<1>{MASK}@"),
    # Authorization: Bearer xyz / x-api-key: xyz (HTTP header lines and dumps of header dicts)
    (
        "a credential header",
        re.compile(
            r"(?i)((?<![A-Za-z0-9_-])(?:proxy-)?(?:authorization|x-api-key|api-key|x-goog-api-key|cookie|set-cookie)[\"']?\s*[:=]\s*[\"']?)"
            r"(?!\*\*\*)(?:(?:bearer|basic|token)\s+)?(?!\*\*\*)[^\s,;\"'&<>]+"
        ),
        rf"\g<1>{MASK}",
    ),
    # api_key=..., ?key=..., token: ..., "password": "..." (spec params, query strings, JSON, repr);
    # placeholders in help and error text (`key=value`, `KEY=VALUE`, `api_key=...`) are not secrets
    (
        "a secret parameter",
        re.compile(rf"(?i)((?<![A-Za-z0-9_-]){_SECRET_NAME.pattern}[\"']?\s*[=:]\s*[\"']?)(?!\*\*\*|(?:value|VALUE|\.\.\.)(?![A-Za-z0-9_-]))[^\s,;\"'&<>)\]}}]+"),
        rf"\g<1>{MASK}",
    ),
    # "Bearer" alone, not "Basic": "basic strategy" is English; Basic credentials come after a header name
    ("a bearer token", re.compile(r"(?i)\b(bearer)\s+(?!\*\*\*)[A-Za-z0-9._~+/=\-]{6,}"), rf"\g<1> {MASK}"),
    (
        "a key-shaped value",
        re.compile(
            r"(?<![A-Za-z0-9])(?:"
            r"sk-[A-Za-z0-9_\-]{6,}|sk_[A-Za-z0-9_]{6,}|gh[pousr]_[A-Za-z0-9]{10,}|github_pat_[A-Za-z0-9_]{10,}"
            r"|hf_[A-Za-z0-9]{10,}|xox[abprs]-[A-Za-z0-9\-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{20,}"
            r"|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
            r")"
        ),
        MASK,
    ),
]

_remembered: set[str] = set()


def remember_secret(value: str | None) -> None:
    """Mask this exact value from now on (a key read from the variable `api_key_env=` names)."""
    if value and len(value) >= _MIN_LITERAL:
        _remembered.add(value)


_secret_env_names: dict[str, bool] = {}  # variable name -> holds a secret; names repeat, decide once


def _literal_secrets() -> list[str]:
    """Secret values known to this process, longest first (so a prefix never leaves a tail).
    Read afresh each call (a variable may be set at any time), values only of secret-named
    variables: about 11 us with 36 variables, against 47 us decoding every value."""
    values = set(_remembered)
    for name in os.environ:
        secret = _secret_env_names.get(name)
        if secret is None:
            secret = _secret_env_names[name] = bool(_SECRET_ENV_NAME.search(name))
        if secret:
            value = os.environ.get(name)
            if value and len(value) >= _MIN_LITERAL:
                values.add(value)
    return sorted(values, key=len, reverse=True)


def redact(text: Any) -> str:
    """`text` (any object, as str) with every secret replaced by `***`."""
    out = text if isinstance(text, str) else str(text)
    if not out:
        return out
    for value in _literal_secrets():
        if value in out:
            out = out.replace(value, MASK)
    for _label, pattern, replacement in _RULES:
        out = pattern.sub(replacement, out)
    return out


def find_secrets(text: str) -> list[str]:
    """What kinds of literal secret `text` carries ("a secret parameter", "user-info in a URL",
    ...), empty when none. Masks already in place (`api_key=***`) do not count."""
    found: list[str] = []
    if any(value in text for value in _literal_secrets()):
        found.append("the value of a secret environment variable")
    found += [label for label, pattern, _replacement in _RULES if pattern.search(text)]
    return found


def is_secret_name(name: str) -> bool:
    """True for field names that hold secrets (`api_key`, `password`, `x-api-key`, `token`)."""
    return bool(_SECRET_NAME.fullmatch(name.strip()))


def redact_data(value: Any) -> Any:
    """A copy of a JSON-like value with secrets masked: values under secret-named keys become
    `***`, every string, keys included, is `redact`ed. Used for stored configs, metadata and exported rows."""
    if isinstance(value, dict):  # keys too: a key can be a pasted secret (`--meta sk-...=x`)
        return {redact(k): (MASK if is_secret_name(str(k)) and value[k] not in (None, "") else redact_data(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_data(v) for v in value]
    if isinstance(value, str):
        return redact(value)
    return value


def known_secret_masker() -> Callable[[Any], Any]:
    """A function that masks every secret value this process knows now (the values of secret
    environment variables and of `remember_secret`) in a string, or in a JSON-like value with its
    mapping keys, and changes nothing else. One snapshot of the secrets serves a whole record: take
    a new masker for the next one, as a token may be remembered in between."""
    secrets = _literal_secrets()
    if not secrets:
        return _unchanged
    # A structure is searched as its JSON first (one C pass): nearly always nothing is found and
    # the value is kept as it is. A secret with quotes or backslashes appears escaped there.
    in_json = [(secret, json.dumps(secret, ensure_ascii=False)[1:-1]) for secret in secrets]

    def mask_text(text: str) -> str:
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return mask_text(value)
        if isinstance(value, dict):
            return {(mask_text(k) if isinstance(k, str) else k): walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    def mask(value: Any) -> Any:
        if isinstance(value, str):
            return mask_text(value)
        if not isinstance(value, (dict, list, tuple)):
            return value
        try:
            flat = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):  # keys JSON cannot hold, a cycle: walk it all
            return walk(value)
        return walk(value) if any(raw in flat or escaped in flat for raw, escaped in in_json) else value

    return mask


def _unchanged(value: Any) -> Any:
    return value


class _RedactedLogRecord(logging.LogRecord):
    """A log record whose message is redacted when a handler formats it (libraries log URLs and
    request headers: httpx at INFO, openai and LiteLLM at DEBUG), and whose traceback and stack
    text are too: `log.exception` prints the exception's message, which may quote a key or a URL.

    `logging.Formatter.format` renders a traceback into `record.exc_text` and then appends it (and
    `stack_info`), so both are redacted as they are assigned, under their usual names."""

    def getMessage(self) -> str:  # noqa: N802 - logging's name
        return redact(super().getMessage())

    @property
    def exc_text(self) -> str | None:
        return self.__dict__.get("exc_text")

    @exc_text.setter
    def exc_text(self, value: str | None) -> None:
        self.__dict__["exc_text"] = redact(value) if value else value

    @property
    def stack_info(self) -> str | None:
        return self.__dict__.get("stack_info")

    @stack_info.setter
    def stack_info(self, value: str | None) -> None:
        self.__dict__["stack_info"] = redact(value) if value else value


def install_log_redaction() -> None:
    """Make every log record of this process redact its message and traceback (idempotent). The
    CLI, the web app and the serve-env app call it at start-up, so every logger, ours or a
    library's, goes through `redact`."""
    if logging.getLogRecordFactory() is not _RedactedLogRecord:
        logging.setLogRecordFactory(_RedactedLogRecord)
