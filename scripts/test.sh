#!/usr/bin/env bash
# Install what the tests need (the package with its test extras, Debian's Chromium
# for the browser test) and run the linters and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq chromium >/dev/null
    else
        sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null
    fi
fi
python -m pip install --quiet --disable-pip-version-check -e ".[test]"

python -m ruff check .
python -m ruff format --check .
python -m pytest "$@"
