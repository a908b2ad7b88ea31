package main

import (
	"slices"
	"testing"
)

// TestBackgroundEnv: a background borg a command starts keeps the
// environment but the developer's profile switches, so that it does not
// write over the profile of the command that was run.
func TestBackgroundEnv(t *testing.T) {
	for _, tc := range []struct {
		env, want []string
	}{
		{nil, []string{}},
		{[]string{"HOME=/h", "BORG_STORE=/s"}, []string{"HOME=/h", "BORG_STORE=/s"}},
		{[]string{"BORG_CPUPROFILE=/tmp/p", "HOME=/h", "BORG_MEMPROFILE=/tmp/m"}, []string{"HOME=/h"}},
		{[]string{"BORG_CPUPROFILE_X=1", "XBORG_CPUPROFILE=1"}, []string{"BORG_CPUPROFILE_X=1", "XBORG_CPUPROFILE=1"}},
	} {
		if got := backgroundEnv(tc.env); !slices.Equal(got, tc.want) {
			t.Errorf("backgroundEnv(%q) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
