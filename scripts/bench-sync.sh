#!/usr/bin/env bash
# Times borg sync on a generated team store (BENCHMARKS.md, "sync"):
# 10,000 lessons and 1,000,000 log lines by default; BORG_BENCH_LESSONS and
# BORG_BENCH_EVENTS change the size. The store is generated once and cached
# in the temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'BenchmarkSync' -benchtime "${BENCHTIME:-5x}" ./memfs/
