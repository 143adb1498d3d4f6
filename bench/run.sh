#!/bin/sh
# make bench: see bench/bench.py for what is measured and how.
set -eu
cd "$(dirname "$0")/.."
export PROFD_CORPUS="${PROFD_CORPUS:-$(cd .. && pwd)/shared/corpus}"
exec /usr/bin/python3 bench/bench.py
