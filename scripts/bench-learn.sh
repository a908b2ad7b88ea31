#!/usr/bin/env bash
# bench-learn.sh: time `borg learn` end to end (process start, lesson write,
# log append, go-git commit) on a throwaway store; prints the median, min and
# max in ms. Usage: scripts/bench-learn.sh [runs] (default 50).
set -euo pipefail
runs=${1:-50}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/borg" ./cmd/borg
export BORG_STORE="$work/store" HOME="$work/home"
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
"$work/borg" init >/dev/null
for i in $(seq 1 "$runs"); do
  start=$(date +%s%N)
  "$work/borg" learn "Lesson number $i: run the migrations before test suite $i" \
    --body "Why: benchmark lesson $i." --tag bench >/dev/null
  end=$(date +%s%N)
  echo $(( (end - start) / 1000 ))
done | sort -n | awk '{ us[NR] = $1 } END {
  n = NR; med = (n % 2) ? us[(n + 1) / 2] : (us[n / 2] + us[n / 2 + 1]) / 2
  printf "borg learn: %d runs, median %.1f ms (min %.1f, max %.1f)\n", n, med / 1000, us[1] / 1000, us[n] / 1000
}'
