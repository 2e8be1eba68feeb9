#!/usr/bin/env bash
# Set up (as scripts/setup.sh --dev) and run the checks: ruff, mypy, the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --dev
.venv/bin/ruff check localjudge tests scripts
.venv/bin/mypy localjudge scripts tests
.venv/bin/python -m pytest "$@"
