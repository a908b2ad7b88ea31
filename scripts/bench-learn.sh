#!/usr/bin/env bash
# bench-learn.sh: time `borg learn` end to end (process start, lesson write,
# log append, commit); prints the median, min and max in ms.
# Usage: scripts/bench-learn.sh [runs] [store]
#   runs   default 50
#   store  a store to learn into, copied first (the original is untouched),
#          e.g. the process benchmarks' /tmp/borg-bench-store-v4-100000-1000000
#          (BORG_BENCH_LESSONS=100000 go test -run '^$' -bench StopAfterLearnProcess
#          -benchtime 1x ./cmd/borg makes it); default a fresh empty store.
set -euo pipefail
runs=${1:-50}
from=${2:-}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/build-borg.sh "$work/borg"
export BORG_STORE="$work/store" HOME="$work/home"
export BORG_ENGINEER=bench@example.com BORG_PLACEBO_RATE=0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
if [ -n "$from" ]; then
  cp -a "$from" "$BORG_STORE"
  "$work/borg" recall "warm up the index and the caches" >/dev/null
else
  "$work/borg" init >/dev/null
fi
for i in $(seq 1 "$runs"); do
  start=$(date +%s%N)
  "$work/borg" learn "Lesson number $i $$: run the migrations before test suite $i" \
    --body "Why: benchmark lesson $i." --tag bench >/dev/null
  end=$(date +%s%N)
  echo $(( (end - start) / 1000 ))
done | sort -n | awk -v store="${from:-a fresh store}" '{ us[NR] = $1 } END {
  n = NR; med = (n % 2) ? us[(n + 1) / 2] : (us[n / 2] + us[n / 2 + 1]) / 2
  printf "borg learn into %s: %d runs, median %.1f ms (min %.1f, max %.1f)\n", store, n, med / 1000, us[1] / 1000, us[n] / 1000
}'
