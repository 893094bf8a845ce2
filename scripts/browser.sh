#!/usr/bin/env bash
# Debian's headless Chromium for the browser tests (tests/web/test_browser.py, test_xss.py).
# Playwright's own browser download cannot work offline; Playwright drives Debian's /usr/bin/chromium
# instead (package `chromium`). Installs it with apt-get when missing and we are root; otherwise
# says so and the browser tests skip (unless ARENA_REQUIRE_SERVICES=1, as in CI).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "chromium is not installed (and not root to apt-get it): browser tests will be skipped" >&2
  exit 0
fi
echo "installing Debian's chromium for the browser tests (apt-get)..." >&2
(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >&2
