#!/usr/bin/env bash
# bench-housekeeping.sh: learn N lessons into a fresh store without ever
# syncing, wait for any housekeeping borg started to end, and print the
# loose objects git counts (git's own gc.auto default is 6,700).
# Usage: scripts/bench-housekeeping.sh [learns]   (default 2000)
set -euo pipefail
n=${1:-2000}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/build-borg.sh "$work/borg"
export BORG_STORE="$work/store" HOME="$work/home"
export BORG_ENGINEER=bench@example.com BORG_PLACEBO_RATE=0
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
"$work/borg" init >/dev/null
peak=0
for i in $(seq 1 "$n"); do
  "$work/borg" learn "Lesson $i of the housekeeping run: deploy service s$i after its canary" >/dev/null
  if (( i % 250 == 0 )); then
    loose=$(git -C "$BORG_STORE" count-objects -v | awk '/^count:/ {print $2}')
    (( loose > peak )) && peak=$loose
    echo "after $i learns: $loose loose objects"
  fi
done
# A gc borg started may still run: git's gc.pid names it while it does.
for _ in $(seq 1 600); do
  [ -e "$BORG_STORE/.git/gc.pid" ] || break
  sleep 0.1
done
git -C "$BORG_STORE" count-objects -v | awk '/^count:|^in-pack:|^packs:/'
echo "peak loose objects at the checkpoints: $peak"
