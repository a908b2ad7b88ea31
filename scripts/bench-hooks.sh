#!/usr/bin/env bash
# Times borg as agents and git run it: the Stop hook and recall as processes,
# recall in process, post-commit's overhead on git commit, and the first Stop
# hook after a lesson file changed, on a generated
# store (default 10,000 lessons, 1,000,000 events; override with
# BORG_BENCH_LESSONS / BORG_BENCH_EVENTS). The first run generates the store
# (cached in $TMPDIR).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-31}
go test -run '^$' -bench 'StopHookProcess|RecallProcess|PostCommitOverhead' -benchtime "${n}x" ./cmd/borg
go test -run '^$' -bench 'RecallInProcess' -benchtime 200x ./cmd/borg
go test -run '^$' -bench 'StopAfterChangeProcess' -benchtime 11x ./cmd/borg
