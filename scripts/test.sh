#!/usr/bin/env bash
# The whole test suite, slow tests included. Starts (and always stops) the services tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
eval "$(bash scripts/pg.sh start)"
trap '[ -n "${ARENA_TEST_PG_DIR:-}" ] && bash scripts/pg.sh stop "$ARENA_TEST_PG_DIR"' EXIT
set +e
$BIN/python -m pytest -q "$@"
status=$?
set -e
exit $status
