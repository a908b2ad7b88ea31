# benchlib.sh: what the timing scripts share; sourced, not run.
# bench_setup BINARY... makes $work (a temporary directory, removed at
# exit) and sets bins to the binaries given, or to ./cmd/borg as
# scripts/build-borg.sh builds it when none is. Run from the repository's
# root.
bench_setup() {
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  bins=("$@")
  if ((${#bins[@]} == 0)); then
    scripts/build-borg.sh "$work/borg"
    bins=("$work/borg")
  fi
}
