#!/usr/bin/env bash
# profile-stop.sh: CPU-profile the first Stop hook after a `borg learn`, as
# BenchmarkStopAfterLearnProcess times it (the same lesson, session message
# and environment), and print each Stop's wall and CPU time and pprof's top
# functions over all the Stops. With --faults, the Stops run unprofiled and
# each one's wall time (ms) and minor page faults (GNU time's %R) are
# printed, then their medians: in a short-lived process each fault of fresh
# memory is dear (BENCHMARKS.md).
# Usage: scripts/profile-stop.sh [--faults] [runs] store
#   runs   default 15
#   store  copied first (the original is untouched), e.g.
#          /tmp/borg-bench-store-v4-100000-1000000
#          (BORG_BENCH_LESSONS=100000 go test -run '^$' -bench StopAfterLearnProcess
#          -benchtime 1x ./cmd/borg makes it)
set -euo pipefail
faults=
if [ "${1:-}" = --faults ]; then
  faults=1
  shift
fi
runs=${1:-15}
from=${2:?usage: scripts/profile-stop.sh [runs] store}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/build-borg.sh "$work/borg"
cp -a "$from" "$work/store"
mkdir -p "$work/prof" "$work/proj" "$work/home"
export BORG_STORE="$work/store" HOME="$work/home"
export BORG_ENGINEER=bench@example.com BORG_PLACEBO_RATE=0 BORG_FLOOR=0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
"$work/borg" recall "warm up the index and the caches" >/dev/null
for i in $(seq 1 "$runs"); do
  stamp="$i-$(date +%s%N)"
  "$work/borg" learn "Payments gateway retries need backoff and jitter, case $stamp" \
    --body "Seen in run $stamp: the client retried without a pause." >/dev/null
  in=$(printf '{"session_id":"profile-%s","cwd":"%s","last_assistant_message":"I added a retry with backoff to the payments gateway client."}' \
    "$stamp" "$work/proj")
  if [ -n "$faults" ]; then
    t0=$EPOCHREALTIME
    echo "$in" | /usr/bin/time -f '%R' -o "$work/prof/$i.faults" "$work/borg" hook stop >/dev/null
    t1=$EPOCHREALTIME
    echo "$(((${t1/./} - ${t0/./}) / 1000)) $(cat "$work/prof/$i.faults")" >"$work/prof/$i.time"
  else
    echo "$in" | BORG_CPUPROFILE="$work/prof/$i.prof" "$work/borg" hook stop >/dev/null
  fi
done
if [ -n "$faults" ]; then
  echo "--- each Stop: wall, minor page faults (the one whose log tail crossed 16 KiB found the summary cache due for a rewrite: above BORG_SUMMARY_BUDGET it starts a background reindex for it, below it rewrites the cache itself)"
  for i in $(seq 1 "$runs"); do
    read -r wall minflt <"$work/prof/$i.time"
    printf 'stop %2d: %s ms, %s faults\n' "$i" "$wall" "$minflt"
  done
  median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
  echo "median: $(cat "$work"/prof/*.time | awk '{print $1}' | median) ms, $(cat "$work"/prof/*.time | awk '{print $2}' | median) faults"
  exit 0
fi
echo "--- each Stop (the one whose log tail crossed 16 KiB found the summary cache due for a rewrite: above BORG_SUMMARY_BUDGET it starts a background reindex for it, below it rewrites the cache itself)"
for i in $(seq 1 "$runs"); do
  printf 'stop %2d: %s\n' "$i" "$(go tool pprof -top "$work/borg" "$work/prof/$i.prof" 2>/dev/null | sed -n 's/^Duration: \(.*\), Total samples = \([^ ]*\).*/\1 wall, \2 CPU/p')"
done
echo "--- all Stops"
go tool pprof -top "$work/borg" "$work/prof"/*.prof 2>/dev/null | head -30
echo "--- by caller"
go tool pprof -top -cum "$work/borg" "$work/prof"/*.prof 2>/dev/null | grep -E 'Duration|index\.|main\.' | head -20
