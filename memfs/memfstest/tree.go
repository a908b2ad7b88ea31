package memfstest

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TreeHolds checks, through git (a function running git in the
// repository and returning its output), that commit's tree holds exactly
// the paths of want, each with want's content.
func TreeHolds(tb testing.TB, git func(args ...string) string, commit string, want map[string]string) {
	tb.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(git("ls-tree", "-r", "--name-only", commit)), "\n") {
		got = append(got, line)
		if c := git("cat-file", "blob", commit+":"+line); c != want[line] {
			tb.Errorf("%s holds %q, want %q", line, c, want[line])
		}
	}
	slices.Sort(got)
	if paths := slices.Sorted(maps.Keys(want)); !slices.Equal(got, paths) {
		tb.Fatalf("tree holds %q, want %q", got, paths)
	}
}
