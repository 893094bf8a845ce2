#!/usr/bin/env bash
# The whole test suite, slow tests included. Starts (and always stops) the services tests need.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
$BIN/python -m pytest -q "$@"
