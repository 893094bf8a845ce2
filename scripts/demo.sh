#!/usr/bin/env bash
# The main job on the embedded defaults: a league on SQLite, no network, no API key.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
DB=${ARENA_DB:-sqlite:///demo.db}
$BIN/arena league run examples/demo-league.yaml --db "$DB"
$BIN/arena leaderboard --by bt --db "$DB"
$BIN/arena play tictactoe -p bot -p random --seed 1 --quiet
