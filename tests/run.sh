#!/bin/sh
# Runs every test: unit tests, the plugin conformance suite, the integration
# tests against the real binary, and a short fuzz smoke run. Prints one
# "N passed, N failed" line for the whole run.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD
export PROFD_CORPUS="${PROFD_CORPUS:-$(cd .. && pwd)/shared/corpus}"
PY=/usr/bin/python3
passed=0
failed=0

# Adds the counts from a runner's "N passed, N failed" line; a runner that
# printed none (it crashed) counts as one failure.
tally() {
    name=$1 out=$2 rc=$3
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
    if [ -z "$line" ]; then
        echo "$name: no result line (exit $rc)"; tail -30 "$out"; failed=$((failed + 1)); return
    fi
    p=$(echo "$line" | cut -d' ' -f1); f=$(echo "$line" | cut -d' ' -f3)
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$f" != 0 ] || [ "$rc" != 0 ]; then
        echo "$name: $line (exit $rc)"; grep -vE '^[0-9]{4}-' "$out" | tail -60
        [ "$f" = 0 ] && failed=$((failed + 1))
    else
        echo "$name: $line"
    fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    "$t" > "$tmp/out" 2>&1; tally "unit $(basename "$t")" "$tmp/out" $?
done

mkdir -p "$tmp/conformance"
(cd "$tmp/conformance" && "$OLDPWD/$BUILD/tests/conformance" "$OLDPWD/$BUILD/modules") > "$tmp/out" 2>&1
tally "conformance" "$tmp/out" $?

$PY tests/integration/run.py > "$tmp/out" 2>&1
tally "integration" "$tmp/out" $?

if [ -z "${PROFD_SANITIZED:-}" ] && command -v clang > /dev/null; then
    FUZZ_SECONDS=${FUZZ_SECONDS:-10} tests/fuzz/run.sh > "$tmp/out" 2>&1
    rc=$?
    if [ $rc = 0 ]; then passed=$((passed + 1)); echo "fuzz smoke: ok"
    else failed=$((failed + 1)); echo "fuzz smoke: FAILED"; tail -40 "$tmp/out"; fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
