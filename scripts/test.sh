#!/usr/bin/env bash
# The whole test suite, slow tests included, with a throw-away PostgreSQL for the tests marked
# `postgres` (scripts/pg.sh starts it and always stops it). Extra arguments go to pytest:
#   scripts/test.sh tests/league -q
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/pg.sh run .venv/bin/python -m pytest -q "$@"
