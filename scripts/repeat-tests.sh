#!/usr/bin/env bash
# Repeats a package's tests on a fresh clone of this checkout's HEAD, to
# find tests that depend on timing. Not run by CI.
#   scripts/repeat-tests.sh [RUNS] [RACE_RUNS] [PACKAGE]
# defaults: 20 runs without -race and 5 with it, of ./cmd/borg/.
set -euo pipefail
runs=${1:-20} race_runs=${2:-5} pkg=${3:-./cmd/borg/}
src=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
git clone -q "$src" "$dir/borg"
cd "$dir/borg"
fail=0
for i in $(seq 1 "$runs"); do
  if go test -count=1 "$pkg" >"$dir/out" 2>&1; then echo "run $i: ok"; else echo "run $i: FAIL"; grep -E '^\s+--- FAIL|FAIL:' "$dir/out" | head -5; fail=$((fail+1)); fi
done
for i in $(seq 1 "$race_runs"); do
  if go test -race -count=1 "$pkg" >"$dir/out" 2>&1; then echo "race run $i: ok"; else echo "race run $i: FAIL"; grep -E '^\s+--- FAIL|FAIL:' "$dir/out" | head -5; fail=$((fail+1)); fi
done
echo "$fail of $((runs+race_runs)) runs failed"
[ "$fail" -eq 0 ]
