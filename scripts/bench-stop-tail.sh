#!/usr/bin/env bash
# bench-stop-tail.sh: time Stop hooks as a team's sessions run them between
# two rewrites of the log's summary cache: each Stop a new session's, with
# the default relevance floor (most Stops ask nothing and append a line or
# two to the log), so the tail of log lines every hook folds onto the cached
# summary grows from Stop to Stop until a rewrite. Prints, per build, the
# median wall time (ms) and minor page faults (GNU time's %R) of the Stops,
# and those of the last tenth (the longest tails), beside `git status` in
# the store timed the same way (the issue's yardstick).
# With --after-learn, each Stop follows a `borg learn` by the same build
# (untimed): the first Stop after a learn, which reads the new lesson into
# the index before it searches.
# With --project, the session works in a git project (200 committed files,
# one changed since), and each Stop follows the session's SessionStart
# (untimed): the Stop then reads the session's work with git, as an agent's
# Stop in a repository does.
# With --trace, each Stop also appends its steps to a file (BORG_TRACE), and
# the script prints, per build, the medians of two of them, in the process
# and without its start: when the log's summary was in, and when the hook
# was done (builds from before BORG_TRACE print nothing for it).
# Usage: scripts/bench-stop-tail.sh [--after-learn] [--trace] [runs] store [borg binary...]
#   runs   default 100
#   store  copied first for each build (the original is untouched), e.g.
#          /tmp/borg-bench-store-v4-10000-1000000 (BORG_BENCH_LESSONS=10000
#          go test -run '^$' -bench StopHookProcess -benchtime 1x ./cmd/borg
#          makes it)
#   binary without one, ./cmd/borg as scripts/build-borg.sh builds it; with
#          several, they take turns (A, B, A, B…), each in its own copy.
set -euo pipefail
learn= trace= project=
while true; do
  case "${1:-}" in
  --after-learn) learn=1 ;;
  --trace) trace=1 ;;
  --project) project=1 ;;
  *) break ;;
  esac
  shift
done
runs=${1:-100}
from=${2:?usage: scripts/bench-stop-tail.sh [--after-learn] [--project] [--trace] [runs] store [borg binary...]}
cd "$(dirname "$0")/.."
. scripts/benchlib.sh
bench_setup "${@:3}"
export HOME="$work/home" BORG_ENGINEER=bench@example.com BORG_PLACEBO_RATE=0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
mkdir -p "$work/home" "$work/proj"
if [ -n "$project" ]; then
  for i in $(seq -w 0 199); do echo "package p$i" >"$work/proj/f$i.go"; done
  git -C "$work/proj" init -q && git -C "$work/proj" add . && git -C "$work/proj" commit -q -m init
  printf '\n// retry the payments gateway with backoff\n' >>"$work/proj/f001.go"
fi
for k in "${!bins[@]}"; do
  cp -a "$from" "$work/store-$k"
  BORG_STORE="$work/store-$k" "${bins[$k]}" recall "warm up the index and the caches" >/dev/null
done
# The copies' writeback done before the first timed run: each learn and
# Stop syncs files, and would wait behind it.
sync
msg="I added a retry with backoff to the payments gateway client and a timeout to the request context."
for i in $(seq 1 "$runs"); do
  for k in "${!bins[@]}"; do
    if [ -n "$learn" ]; then
      BORG_STORE="$work/store-$k" "${bins[$k]}" learn "Payments gateway retries need backoff and jitter, case $i-$k $$" \
        --body "Seen in run $i: the client retried without a pause." >/dev/null
    fi
    if [ -n "$project" ]; then
      printf '{"session_id":"tail-%s-%s","cwd":"%s","source":"startup"}' "$i" "$k" "$work/proj" |
        BORG_STORE="$work/store-$k" "${bins[$k]}" hook session-start >/dev/null
    fi
    in=$(printf '{"session_id":"tail-%s-%s","cwd":"%s","last_assistant_message":"%s"}' "$i" "$k" "$work/proj" "$msg")
    t0=$EPOCHREALTIME
    tr=
    [ -n "$trace" ] && tr="$work/trace-$k"
    echo "$in" | BORG_STORE="$work/store-$k" BORG_TRACE=$tr /usr/bin/time -f '%R' -o "$work/faults" "${bins[$k]}" hook stop >/dev/null
    t1=$EPOCHREALTIME
    echo "$k $i $(((${t1/./} - ${t0/./}))) $(cat "$work/faults")"
  done
done >"$work/times"
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for i in $(seq 1 21); do
  t0=$EPOCHREALTIME
  /usr/bin/time -f '%R' -o "$work/faults" git -C "$work/store-0" status --porcelain >/dev/null
  t1=$EPOCHREALTIME
  echo $(((${t1/./} - ${t0/./})))
done >"$work/status"
status=$(awk '{print $1 / 1000}' "$work/status" | median)
echo "git status in the store: median $status ms"
for k in "${!bins[@]}"; do
  name=${bins[$k]}
  ((${#bins[@]} == 1)) && name=borg
  all=$(awk -v k="$k" '$1 == k' "$work/times")
  last=$(awk -v k="$k" -v n="$runs" '$1 == k && $2 > n - n / 10' "$work/times")
  med=$(echo "$all" | awk '{print $3 / 1000}' | median)
  lastmed=$(echo "$last" | awk '{print $3 / 1000}' | median)
  printf '%s: %d Stops%s%s, median %.1f ms (%.2fx git status), %s faults; last tenth %.1f ms (%.2fx), %s faults\n' "$name" "$runs" "${learn:+ each after a learn}" "${project:+ in a git project}" \
    "$med" "$(awk -v a="$med" -v b="$status" 'BEGIN {print a / b}')" "$(echo "$all" | awk '{print $4}' | median)" \
    "$lastmed" "$(awk -v a="$lastmed" -v b="$status" 'BEGIN {print a / b}')" "$(echo "$last" | awk '{print $4}' | median)"
  if [ -n "$trace" ] && [ -s "$work/trace-$k" ]; then
    summary=$(awk '/log summary loaded/ {print $2}' "$work/trace-$k" | median)
    done_=$(awk '/hook stop done/ {print $2}' "$work/trace-$k" | median)
    printf '  in the process (BORG_TRACE), medians: the summary in at %s ms, the hook done at %s ms\n' "$summary" "$done_"
  fi
done
