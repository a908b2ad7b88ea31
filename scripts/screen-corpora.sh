#!/bin/sh
# screen-corpora.sh [DIR]: how many documents of each BEIR corpus under DIR
# (default /work/shared/data/beir) borg's screen refuses (secrets and
# instruction-like text): the false positives on natural prose.
set -eu
dir=${1:-/work/shared/data/beir}
cd "$(dirname "$0")/.."
BORG_SCREEN_CORPORA=$dir go test -count=1 -run '^TestScreenCorpora$' -v ./memfs/ | grep -E 'documents:|doc ' || true
