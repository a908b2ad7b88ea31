package gitcli

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestHugeMalloc: git gets glibc's huge-page tunable added to the
// environment, beside the user's other tunables, and a hugetlb setting of
// the user's own wins.
func TestHugeMalloc(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     []string
		want    string // the GLIBC_TUNABLES git gets
		entries int
	}{
		{"none", []string{"HOME=/h"}, "glibc.malloc.hugetlb=1", 2},
		{"empty", []string{"GLIBC_TUNABLES=", "HOME=/h"}, "glibc.malloc.hugetlb=1", 2},
		{"others kept", []string{"GLIBC_TUNABLES=glibc.malloc.arena_max=2"}, "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", 1},
		{"user's own", []string{"GLIBC_TUNABLES=glibc.malloc.hugetlb=0"}, "glibc.malloc.hugetlb=0", 1},
		{"the last wins", []string{"GLIBC_TUNABLES=glibc.malloc.hugetlb=0", "GLIBC_TUNABLES=glibc.malloc.arena_max=2"}, "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := slices.Clone(tc.env)
			got := hugeMalloc(tc.env)
			if !slices.Equal(tc.env, orig) {
				t.Errorf("the caller's environment changed: %q", tc.env)
			}
			if len(got) != tc.entries || lastTunables(got) != tc.want {
				t.Errorf("hugeMalloc(%q) = %q; want GLIBC_TUNABLES=%s in %d entries", tc.env, got, tc.want, tc.entries)
			}
		})
	}
	t.Setenv("GLIBC_TUNABLES", "glibc.malloc.arena_max=2")
	cmd := Git{Isolate: true}.Command(context.Background(), "version")
	if got := lastTunables(cmd.Env); got != "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1" {
		t.Errorf("git's GLIBC_TUNABLES = %q", got)
	}
}

func lastTunables(env []string) string {
	v := "<none>"
	for _, kv := range env {
		if t, ok := strings.CutPrefix(kv, "GLIBC_TUNABLES="); ok {
			v = t
		}
	}
	return v
}
