#!/usr/bin/env bash
# bench-post-tool.sh: time the post-tool hook, which an agent runs after
# every tool call, for three calls: a shell command that runs the tests
# (and passes), a plain shell command, and a file edit. Each call is a new
# session's, in a copy of the store. Prints, per build and call, the median
# wall time (ms) and minor page faults (GNU time's %R), and the median time
# in the process at which the hook was done (BORG_TRACE).
# Usage: scripts/bench-post-tool.sh [runs] store [borg binary...]
#   runs   default 60
#   store  copied first for each build (the original is untouched)
#   binary without one, ./cmd/borg as scripts/build-borg.sh builds it; with
#          several, they take turns (A, B, A, B…), each in its own copy.
set -euo pipefail
runs=${1:-60}
from=${2:?usage: scripts/bench-post-tool.sh [runs] store [borg binary...]}
cd "$(dirname "$0")/.."
. scripts/benchlib.sh
bench_setup "${@:3}"
export HOME="$work/home" BORG_ENGINEER=bench@example.com BORG_PLACEBO_RATE=0
mkdir -p "$work/home" "$work/proj"
for k in "${!bins[@]}"; do
  cp -a "$from" "$work/store-$k"
  BORG_STORE="$work/store-$k" "${bins[$k]}" recall "warm up the index and the caches" >/dev/null
done
sync
calls=(test shell edit)
call() { # call NAME SESSION: the hook's input for that tool call
  case $1 in
  test) printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go test ./..."},"tool_response":{"stdout":"ok  \\tpayments\\t0.012s\\n","stderr":""}}' "$2" "$work/proj" ;;
  shell) printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls -la internal/client"},"tool_response":{"stdout":"client.go\\nclient_test.go\\n","stderr":""}}' "$2" "$work/proj" ;;
  edit) printf '{"session_id":"%s","cwd":"%s","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"%s/client.go"},"tool_response":{"success":true}}' "$2" "$work/proj" "$work/proj" ;;
  esac
}
for i in $(seq 1 "$runs"); do
  for c in "${calls[@]}"; do
    for k in "${!bins[@]}"; do
      in=$(call "$c" "post-$i-$c-$k")
      rm -f "$work/trace"
      t0=$EPOCHREALTIME
      echo "$in" | BORG_STORE="$work/store-$k" BORG_TRACE="$work/trace" /usr/bin/time -f '%R' -o "$work/faults" "${bins[$k]}" hook post-tool >/dev/null
      t1=$EPOCHREALTIME
      echo "$k $c $(((${t1/./} - ${t0/./}))) $(cat "$work/faults") $(awk '/hook post-tool done/ {print $2}' "$work/trace")"
    done
  done
done >"$work/times"
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for k in "${!bins[@]}"; do
  name=${bins[$k]}
  ((${#bins[@]} == 1)) && name=borg
  for c in "${calls[@]}"; do
    rows=$(awk -v k="$k" -v c="$c" '$1 == k && $2 == c' "$work/times")
    printf '%s: post-tool after a %s call, median %.2f ms, %s faults; done in the process at %s ms\n' "$name" "$c" \
      "$(echo "$rows" | awk '{print $3 / 1000}' | median)" "$(echo "$rows" | awk '{print $4}' | median)" "$(echo "$rows" | awk '{print $5}' | median)"
  done
done
