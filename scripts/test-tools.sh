#!/bin/sh
# Installs what the test suite needs beyond npm packages, from Debian's archive when run as root:
# - chromium for the browser test (playwright-core drives /usr/bin/chromium; it never downloads a
#   browser of its own);
# - postgresql for the PostgreSQL payment store's tests, which start their own server from its
#   binaries (tests/support/postgres.ts) on a free loopback port, never a system service.
set -e
missing=""
if [ ! -x /usr/bin/chromium ] && [ "${ARROW402_SKIP_BROWSER:-}" != "1" ]; then
  missing="chromium"
fi
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 && ! { command -v postgres && command -v initdb; } >/dev/null 2>&1; then
  missing="$missing postgresql"
fi
if [ -z "$missing" ]; then exit 0; fi

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-tools: installing Debian's$missing for the tests"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  exit 0
fi
for package in $missing; do
  case "$package" in
    chromium) echo "test-tools: /usr/bin/chromium is missing: install Debian's 'chromium' package (or set ARROW402_SKIP_BROWSER=1 to skip the browser test)" >&2 ;;
    postgresql) echo "test-tools: PostgreSQL is missing: install Debian's 'postgresql' package (or put a PostgreSQL bin folder with initdb and postgres on PATH)" >&2 ;;
  esac
done
exit 1
