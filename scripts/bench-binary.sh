#!/usr/bin/env bash
# Times a borg binary's start-up against a hello-world Go binary built with
# the same toolchain: `borg version`, and an empty Stop hook outside any
# store (`echo '{}' | borg hook stop` with HOME pointing at an empty folder:
# it finds no store and fails open). Runs alternate (hello, borg, hello,
# borg…; with several borg binaries, hello then each in turn) so that load
# from other processes falls on all alike, and the medians of the
# alternating runs are printed, with each binary's size and the number of
# modules linked into it (`dep` lines of `go version -m`).
#
# Usage: scripts/bench-binary.sh [runs] [borg binary...]
# (default 201 runs; without a binary, ./cmd/borg is built as the README
# installs it, by scripts/build-borg.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-201}
. scripts/benchlib.sh
bench_setup "${@:2}"
mkdir -p "$work/hello" "$work/home" "$work/work"
cat >"$work/hello/main.go" <<'EOF'
package main

import "fmt"

func main() { fmt.Println("hello") }
EOF
printf 'module hello\n\ngo 1.22\n' >"$work/hello/go.mod"
(cd "$work/hello" && go build -o "$work/hello-bin" .)
hello=$work/hello-bin

# us runs its arguments once and prints the wall time in microseconds.
us() {
	local s=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 </dev/null || true
	local e=$EPOCHREALTIME
	echo $(((${e/./} - ${s/./})))
}
hook() { echo '{}' | HOME=$work/home "$1" hook stop; }
version() { "$1" version; }
helloPlain() { "$hello"; }
helloHook() { echo '{}' | "$hello"; }

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m/1000}'; }

# round times hello (the hello-world run as fn runs borg) and fn on each
# binary, alternately, n times, and prints the medians (ms) and each
# binary's ratio to hello's.
round() {
	local label=$1 hfn=$2 fn=$3 i j
	for ((j = 0; j <= ${#bins[@]}; j++)); do : >"$work/t$j"; done
	for ((i = 0; i < n; i++)); do
		us $hfn >>"$work/t0"
		for ((j = 0; j < ${#bins[@]}; j++)); do
			us $fn "${bins[j]}" >>"$work/t$((j + 1))"
		done
	done
	local h m
	h=$(median <"$work/t0")
	printf '%s: hello-world %s ms\n' "$label" "$h"
	for ((j = 0; j < ${#bins[@]}; j++)); do
		m=$(median <"$work/t$((j + 1))")
		printf '  %-40s %6s ms  %5.2fx\n' "${bins[j]}" "$m" "$(awk "BEGIN {print $m/$h}")"
	done
}

cd "$work/work"
printf 'hello-world %d bytes; %d alternating runs each; load %s\n' "$(stat -c %s "$hello")" "$n" \
	"$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
for b in "${bins[@]}"; do
	printf '%s: %d bytes, %d modules\n' "$b" "$(stat -c %s "$b")" "$(go version -m "$b" | grep -c $'^\tdep')"
done
round "borg version" helloPlain version
round "empty Stop hook (no store)" helloHook hook

# faults prints the median count of minor page faults (GNU time's %R) of
# 21 runs of its arguments: on a virtual machine a page's first touch
# costs tens of microseconds, so a start-up's faults weigh in its time.
faults() {
	local i
	for ((i = 0; i < 21; i++)); do
		/usr/bin/time -f %R "$@" </dev/null 2>&1 >/dev/null | tail -1
	done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
if [ -x /usr/bin/time ]; then
	printf 'page faults, median of 21: hello-world %s\n' "$(faults "$hello")"
	for b in "${bins[@]}"; do
		printf '  %-40s borg version %s, empty Stop hook %s\n' "$b" "$(faults "$b" version)" \
			"$(HOME=$work/home faults "$b" hook stop)"
	done
fi
# What each binary's package initialisers cost before main
# (GODEBUG=inittrace=1, 21 runs of borg version; the clock includes the
# faults of the pages they touch): the sum and the five dearest, as means.
for b in "${bins[@]}"; do
	for ((i = 0; i < 21; i++)); do GODEBUG=inittrace=1 "$b" version 2>&1 >/dev/null; done |
		awk -v b="$b" '/^init /{ms[$2]+=$5; by[$2]+=$8; n[$2]++} END {
			for (k in ms) {t+=ms[k]/n[k]; tb+=by[k]/n[k]}
			printf "%s: initialisers %.2f ms, %d KB before main; dearest:", b, t, tb/1024
			for (j = 0; j < 5; j++) {best=""; for (k in ms) if (!(k in done) && (best=="" || ms[k]/n[k] > ms[best]/n[best])) best=k; done[best]=1; printf " %s %.2f ms", best, ms[best]/n[best]}
			printf "\n"}'
done
