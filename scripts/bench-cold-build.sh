#!/usr/bin/env bash
# bench-cold-build.sh: a new teammate's first command on a big team's store.
# Clones STORE (a genstore store, say) afresh, then times the first
# `borg recall` on the clone: the walk of git history, the fold of the log,
# the summary and the search index, built once. With "together", two recalls
# start at once on the clone: one builds, the other waits and reads. Prints
# each command's wall time and peak resident memory (and the build's phase
# lines), and for "together" the sum of the two peaks and a bound on what
# the two held at the same moment.
# Usage: scripts/bench-cold-build.sh STORE [together]
set -euo pipefail
store=${1:?usage: scripts/bench-cold-build.sh STORE [together]}
mode=${2:-alone}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/build-borg.sh "$work/borg"
git clone -q "$store" "$work/clone"
sync
export BORG_STORE="$work/clone"
run() { # name query
  /usr/bin/time -f "$1: %e s wall, %M KiB peak, %U s user, %S s system" \
    "$work/borg" recall "$2" >/dev/null 2>"$work/$1.err"
}
# rss PID...: sets now to the resident memory of the processes, in KiB
# (those that have ended count as nothing); bash builtins only, no
# subshell, so that sampling takes next to nothing from what it watches.
rss() {
  local pid key val rest
  now=0
  for pid in "$@"; do
    while read -r key val rest; do
      if [ "$key" = VmRSS: ]; then now=$((now + val)); fi
    done 2>/dev/null <"/proc/$pid/status" || true
  done
}
if [ "$mode" = together ]; then
  run first "retry flaky network calls" &
  t1=$!
  sleep 0.2
  run second "database migrations" &
  t2=$!
  # Each peak below is a process's own, and they need not fall at the same
  # moment: the second answers once the first's build is done. So the
  # second's memory is sampled (every 100 ms, on Linux) while the first
  # runs, and its most then, added to the first's peak, bounds what the two
  # hold at once. (Sampling the builder itself slows it.)
  most=0
  if [ -d /proc/self ]; then
    sleep 0.3
    first=$(pgrep -f "^$work/borg recall retry" -d ' ' || true)
    second=$(pgrep -f "^$work/borg recall database" -d ' ' || true)
    while [ -n "$first" ] && kill -0 $first 2>/dev/null; do
      rss $second
      if [ "$now" -gt "$most" ]; then most=$now; fi
      sleep 0.1
    done
  fi
  wait
  cat "$work/first.err" "$work/second.err"
  awk '/KiB peak/ { for (i = 1; i <= NF; i++) if ($i == "KiB") sum += $(i - 1) }
    END { printf "sum of the two peaks: %d KiB (%.2f GB)\n", sum, sum * 1024 / 1e9 }' "$work/first.err" "$work/second.err"
  if [ "$most" -gt 0 ]; then
    awk -v most="$most" '/^first:/ { for (i = 1; i <= NF; i++) if ($i == "KiB") kb = $(i - 1) }
      END { printf "the second while the first ran: at most %d KiB; both at once, at most %d KiB (%.2f GB)\n", most, kb + most, (kb + most) * 1024 / 1e9 }' "$work/first.err"
  fi
else
  run first "retry flaky network calls"
  cat "$work/first.err"
fi
