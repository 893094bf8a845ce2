#!/usr/bin/env bash
# The whole test suite, slow tests included, with the services some tests need: Debian's Chromium
# for the browser tests (scripts/browser.sh installs it), Node for the JavaScript example agent
# (scripts/node.sh) and a throw-away PostgreSQL for the tests marked `postgres` (scripts/pg.sh
# starts it and always stops it). As root (CI) they are installed when missing, so
# ARENA_REQUIRE_SERVICES=1 turns anything missing (these, or a dev-extra package such as atroposlib
# or open_spiel) into a failure, never a skip (tests/services.py).
# Extra arguments go to pytest:
#   scripts/test.sh tests/league -q
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/browser.sh
bash scripts/node.sh
if [ "$(id -u)" = 0 ]; then export ARENA_REQUIRE_SERVICES=${ARENA_REQUIRE_SERVICES:-1}; fi
exec bash scripts/pg.sh run .venv/bin/python -m pytest -q "$@"
