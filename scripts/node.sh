#!/usr/bin/env bash
# Node for the JavaScript example agent's test (tests/test_http_agents.py runs
# examples/agents/node_agent.js in a real league). Installs Debian's nodejs with apt-get when node
# is missing and we are root; otherwise says so and that test skips (unless
# ARENA_REQUIRE_SERVICES=1, as in CI, where it fails instead).
set -euo pipefail
if command -v node >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "node is not installed (and not root to apt-get it): the Node example agent's test will be skipped" >&2
  exit 0
fi
echo "installing Debian's nodejs for the example agents' test (apt-get)..." >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs) >&2
