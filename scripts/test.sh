#!/usr/bin/env bash
# The README's test command: install what the tests need into the current Python
# environment (the package with its test extra; Debian's Chromium for the browser
# tests), then run the linters and the fast tier of the tests, in one worker per core
# (pytest-xdist). Says what it installs; never calls sudo. Arguments go to pytest:
# `-m slow` runs the slow tier instead, `-m ""` both (tests/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "test.sh: tiecore needs Python 3.11 or newer; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
fi

if [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "test.sh: installing Debian's chromium (/usr/bin/chromium, for tests/app/test_browser.py):" \
            "apt-get install chromium"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "test.sh: tests/app/test_browser.py needs Debian's chromium at /usr/bin/chromium;" \
            "install it as root (apt-get install chromium) and run this again" >&2
        exit 1
    fi
fi

extra=$("$PYTHON" -c 'import tomllib; print(", ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["test"]))')
echo "test.sh: pip install -e '.[test]' into $("$PYTHON" -c 'import sys; print(sys.prefix)'): tiecore and $extra"
"$PYTHON" -m pip install --quiet --disable-pip-version-check -e ".[test]"

"$PYTHON" -m ruff check .
"$PYTHON" -m ruff format --check .
# one worker per core; a test module's tests stay on one worker (they share its server)
"$PYTHON" -m pytest -n auto --dist loadscope "$@"
