#!/usr/bin/env bash
# bench-cold-build.sh: a new teammate's first command on a big team's store.
# Clones STORE (a genstore store, say) afresh, then times the first
# `borg recall` on the clone: the walk of git history, the fold of the log,
# the summary and the search index, built once. With "together", two recalls
# start at once on the clone: one builds, the other waits and reads. Prints
# each command's wall time and peak resident memory (and the build's phase
# lines), and for "together" the sum of the two peaks.
# Usage: scripts/bench-cold-build.sh STORE [together]
set -euo pipefail
store=${1:?usage: scripts/bench-cold-build.sh STORE [together]}
mode=${2:-alone}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/borg" ./cmd/borg
git clone -q "$store" "$work/clone"
sync
export BORG_STORE="$work/clone"
run() { # name query
  /usr/bin/time -f "$1: %e s wall, %M KiB peak, %U s user, %S s system" \
    "$work/borg" recall "$2" >/dev/null 2>"$work/$1.err"
}
if [ "$mode" = together ]; then
  run first "retry flaky network calls" &
  sleep 0.2
  run second "database migrations" &
  wait
  cat "$work/first.err" "$work/second.err"
  awk '/KiB peak/ { for (i = 1; i <= NF; i++) if ($i == "KiB") sum += $(i - 1) }
    END { printf "together: %d KiB peak (%.2f GB)\n", sum, sum * 1024 / 1e9 }' "$work/first.err" "$work/second.err"
else
  run first "retry flaky network calls"
  cat "$work/first.err"
fi
