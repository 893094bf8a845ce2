#!/usr/bin/env bash
# The main job on the embedded defaults: the demo league (bots, random and the shipped local model
# at two temperatures, on three games) into SQLite, then the leaderboard. No network, no API key.
# Run it again after a kill or Ctrl-C: the league continues where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
DB=${ARENA_DB:-sqlite:///demo.db}
$BIN/arena league run examples/demo-league.yaml --db "$DB"
$BIN/arena leaderboard --by bt --db "$DB"
