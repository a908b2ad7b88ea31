#!/usr/bin/env bash
# bench-sleep.sh: time a full sleep (snapshot, plan, one commit per phase, no
# apply) over generated stores, on 2 CPUs. Prints the median of the Go
# benchmark's runs per size, then a per-step profile of one sleep per size.
# The wall figure is what a user waits; the cpu figure (user+system time of
# borg and its git children) is what a busy machine does not inflate.
# Usage: scripts/bench-sleep.sh [runs] [sizes...] (default 5 runs; 10000;
# pass 100000 to include the large store, which takes minutes to generate).
set -euo pipefail
runs=${1:-5}
shift || true
sizes=("${@:-10000}")
cd "$(dirname "$0")/.."
for n in "${sizes[@]}"; do
  if [ "$n" = 100000 ]; then export BORG_BENCH_100K=1; fi
  out=$(GOMAXPROCS=2 go test -run '^$' -bench "BenchmarkSleep/n=$n\$" -benchtime 1x -count "$runs" -cpu 2 -timeout 2h ./sleep/)
  for metric in ns/op cpu-ns/op; do
    label=wall; [ "$metric" = cpu-ns/op ] && label=cpu
    awk -v m="$metric" '/^BenchmarkSleep/ { for (i = 3; i < NF; i++) if ($(i + 1) == m) print $i }' <<<"$out" |
      sort -n | awk -v n="$n" -v label="$label" '{ ns[NR] = $1 } END {
        if (NR == 0) { if (label == "wall") { print "no benchmark output for n=" n; exit 1 } exit 0 }
        k = NR; med = (k % 2) ? ns[(k + 1) / 2] : (ns[k / 2] + ns[k / 2 + 1]) / 2
        printf "sleep over %d lessons (%s): %d runs, median %.2f s (min %.2f, max %.2f)\n", n, label, k, med / 1e9, ns[1] / 1e9, ns[k] / 1e9
      }'
  done
  GOMAXPROCS=2 BORG_SLEEP_PROFILE="$n" go test -run '^TestSleepProfile$' -v -count 1 -timeout 2h ./sleep/ |
    sed -n '/sleep over/,/^--- /p' | sed '$d'
done
