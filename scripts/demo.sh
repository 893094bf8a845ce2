#!/usr/bin/env bash
# The main job on the embedded defaults: no network, no API key.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
$BIN/arena play tictactoe -p bot -p random --seed 1
