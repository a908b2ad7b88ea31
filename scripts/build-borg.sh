#!/usr/bin/env bash
# build-borg.sh: builds borg as the README installs it, so that what the
# scripts time is the binary users run: static (CGO_ENABLED=0, no dynamic
# loader at each start) and without urfave/cli's man-page and markdown
# generator, which borg never calls (its initialisers would run at every
# start, each hook's included).
# Usage: scripts/build-borg.sh OUTPUT
# cmd/borg's tests build the same way (installBuild in binary_test.go), and a
# test holds the README's install line to it.
set -euo pipefail
out=${1:?usage: scripts/build-borg.sh OUTPUT}
cd "$(dirname "$0")/.."
CGO_ENABLED=0 go build -tags urfave_cli_no_docs -o "$out" ./cmd/borg
