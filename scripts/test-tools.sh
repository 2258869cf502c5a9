#!/bin/sh
# Installs what the test suite needs beyond npm packages: Debian's chromium for the browser test
# (playwright-core drives /usr/bin/chromium; it never downloads a browser of its own).
set -e
if [ -x /usr/bin/chromium ] || [ "${ARROW402_SKIP_BROWSER:-}" = "1" ]; then exit 0; fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-tools: installing Debian's chromium for the browser test"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
  echo "test-tools: /usr/bin/chromium is missing: install Debian's 'chromium' package (or set ARROW402_SKIP_BROWSER=1 to skip the browser test)" >&2
  exit 1
fi
