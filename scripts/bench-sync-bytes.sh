#!/usr/bin/env bash
# What one `borg sync` writes and pushes after N new events, on a copy of a
# generated team store (scripts/genstore) in which this machine is one of
# the team's engineers with its whole history:
#
#   scripts/bench-sync-bytes.sh STORE [N]
#
# It clones STORE into a bare "team remote" and a working clone, makes the
# clone the machine of STORE's first engineer, appends N events (default
# 1000) through borg's own append (genstore -into), runs `borg sync`, and
# prints the bytes the sync added to the clone's objects and to the
# remote's, and the log files it committed. BORG_LOG_ROLL passes through
# (BORG_LOG_ROLL=1G writes one file per machine, as borg did before logs
# rolled).
set -euo pipefail
cd "$(dirname "$0")/.."
store=$(cd "${1:?usage: scripts/bench-sync-bytes.sh STORE [N]}" && pwd)
n=${2:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/build-borg.sh "$work/borg"
go build -o "$work/genstore" ./scripts/genstore
git clone -q --bare "$store" "$work/remote.git"
git clone -q "$work/remote.git" "$work/clone"
export HOME="$work/home" BORG_STORE="$work/clone" BORG_ENGINEER=engineer-000@example.com
export GIT_AUTHOR_NAME=engineer-000 GIT_AUTHOR_EMAIL=engineer-000@example.com
export GIT_COMMITTER_NAME=engineer-000 GIT_COMMITTER_EMAIL=engineer-000@example.com
mkdir -p "$HOME" "$work/clone/.borg"
# The machine of genstore's first engineer (its node id is fixed).
echo n-000000000000 > "$work/clone/.borg/node"
"$work/borg" sync >/dev/null 2>&1 || true
"$work/genstore" -into "$work/clone" -append "$n"
size() { du -sb "$1" | cut -f1; }
before=$(size "$work/clone/.git/objects")
remote=$(size "$work/remote.git/objects")
"$work/borg" sync
after=$(size "$work/clone/.git/objects")
remote_after=$(size "$work/remote.git/objects")
echo "events appended:            $n"
echo "log files committed:        $(git -C "$work/clone" diff-tree --no-commit-id --name-only -r HEAD~1 HEAD -- log | tr '\n' ' ')"
echo "bytes added to the clone:   $((after - before))"
echo "bytes added to the remote:  $((remote_after - remote))"
