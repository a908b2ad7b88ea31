#!/usr/bin/env bash
# bench-git-hugepages.sh: why gitcli gives git's heap huge pages only when
# it reads a big index. For work trees of several sizes (one file changed
# in each), times `git diff REF` with and without
# GLIBC_TUNABLES=glibc.malloc.hugetlb=1, alternating, and prints each
# size's index bytes and the two medians in ms.
# Usage: scripts/bench-git-hugepages.sh [runs] [files...]
#   runs   default 31; files default 200 20000 40000
set -euo pipefail
runs=${1:-31}
shift || true
sizes=("$@")
((${#sizes[@]})) || sizes=(200 20000 40000)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.2f", m/1000}'; }
us() {
	local s=$EPOCHREALTIME
	"$@" >/dev/null 2>&1
	local e=$EPOCHREALTIME
	echo $(((${e/./} - ${s/./})))
}
for n in "${sizes[@]}"; do
	repo=$tmp/repo-$n
	mkdir -p "$repo"
	for ((d = 0; d <= (n - 1) / 500; d++)); do mkdir -p "$repo/$(printf 'd%03d' "$d")"; done
	awk -v n="$n" -v dir="$repo" 'BEGIN { for (i = 0; i < n; i++) { f = sprintf("%s/d%03d/f%06d.txt", dir, int(i / 500), i); print "x" i > f; close(f) } }'
	git -C "$repo" init -q
	git -C "$repo" add .
	git -C "$repo" commit -qm init
	ref=$(git -C "$repo" rev-parse HEAD)
	echo y >>"$repo/d000/f000000.txt"
	# The tunable as git gets it from borg: in its environment, no extra
	# process in between.
	plain() { git -C "$repo" diff --no-color --no-ext-diff "$ref"; }
	huge() { GLIBC_TUNABLES=glibc.malloc.hugetlb=1 git -C "$repo" diff --no-color --no-ext-diff "$ref"; }
	git -C "$repo" diff "$ref" >/dev/null # warm the page cache
	: >"$tmp/plain" && : >"$tmp/huge"
	for ((i = 0; i < runs; i++)); do
		us plain >>"$tmp/plain"
		us huge >>"$tmp/huge"
	done
	printf '%6d files, index %8d bytes: git diff %s ms plain, %s ms with glibc.malloc.hugetlb=1\n' \
		"$n" "$(stat -c %s "$repo/.git/index")" "$(median <"$tmp/plain")" "$(median <"$tmp/huge")"
done
