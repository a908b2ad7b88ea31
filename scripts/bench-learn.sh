#!/usr/bin/env bash
# bench-learn.sh: time `borg learn` end to end (process start, lesson write,
# log append, commit); prints the median, min and max in ms.
# Usage: scripts/bench-learn.sh [runs] [store[,store...]] [borg binary...]
#   runs   default 50
#   store  a store to learn into, copied first (the original is untouched),
#          e.g. the process benchmarks' /tmp/borg-bench-store-v4-100000-1000000
#          (BORG_BENCH_LESSONS=100000 go test -run '^$' -bench StopAfterLearnProcess
#          -benchtime 1x ./cmd/borg makes it); default (or "") a fresh empty store.
#          Several, separated by commas (say one store in two git index
#          formats), are each learned into by every binary.
#   binary without one, ./cmd/borg as scripts/build-borg.sh builds it; with
#          several (say the builds of two commits), each learns into its own
#          copy of the store, warmed by itself (two builds may index in
#          different formats).
# Every (store, binary) pair takes its turn in each round (A, B, A, B…), so
# load falls on all alike; each gets its own line.
set -euo pipefail
runs=${1:-50}
IFS=, read -r -a froms <<<"${2:-}"
((${#froms[@]} > 0)) || froms=("")
cd "$(dirname "$0")/.."
. scripts/benchlib.sh
bench_setup "${@:3}"
export HOME="$work/home" BORG_ENGINEER=bench@example.com BORG_PLACEBO_RATE=0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
pbin=() pfrom=()
for from in "${froms[@]}"; do
  for b in "${bins[@]}"; do
    pbin+=("$b") pfrom+=("$from")
  done
done
for k in "${!pbin[@]}"; do
  if [ -n "${pfrom[$k]}" ]; then
    cp -a "${pfrom[$k]}" "$work/store-$k"
    BORG_STORE="$work/store-$k" "${pbin[$k]}" recall "warm up the index and the caches" >/dev/null
  else
    BORG_STORE="$work/store-$k" "${pbin[$k]}" init >/dev/null
  fi
done
# The copies' writeback done before the first timed run: each learn syncs
# its files, and would wait behind it.
sync
for i in $(seq 1 "$runs"); do
  for k in "${!pbin[@]}"; do
    start=$EPOCHREALTIME
    BORG_STORE="$work/store-$k" "${pbin[$k]}" learn "Lesson number $i-$k $$: run the migrations before test suite $i" \
      --body "Why: benchmark lesson $i." --tag bench >/dev/null
    end=$EPOCHREALTIME
    echo "$k $(( ${end/./} - ${start/./} ))"
  done
done >"$work/times"
for k in "${!pbin[@]}"; do
  name=${pbin[$k]}
  ((${#bins[@]} == 1)) && name=borg
  awk -v k="$k" '$1 == k { print $2 }' "$work/times" | sort -n |
    awk -v store="${pfrom[$k]:-a fresh store}" -v name="$name" '{ us[NR] = $1 } END {
      n = NR; med = (n % 2) ? us[(n + 1) / 2] : (us[n / 2] + us[n / 2 + 1]) / 2
      printf "%s learn into %s: %d runs, median %.1f ms (min %.1f, max %.1f)\n", name, store, n, med / 1000, us[1] / 1000, us[n] / 1000
    }'
done
