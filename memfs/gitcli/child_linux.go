package gitcli

import (
	"os/exec"
	"strings"
	"syscall"
)

// dieWithParent makes a git child borg runs die with borg (Git.DieWithParent:
// only for commands that take no lock).
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// hugeMalloc asks glibc's malloc in git to back its heap with transparent
// huge pages (GLIBC_TUNABLES glibc.malloc.hugetlb=1, glibc 2.35 on; other
// C libraries ignore it) when git is about to read a big index
// (bigIndexRead). git reading an index of 100,000 entries allocates about
// 10 MB, and faulting that in 4 KiB at a time is about half of a
// `git update-index` in a big store; a git that allocates little pays for
// zeroing a 2 MiB page instead (BENCHMARKS.md), so the others are left
// alone. A hugetlb setting of the user's own is kept, and so are its other
// tunables.
func hugeMalloc(env []string, dir string, args []string) []string {
	if !bigIndexRead(dir, args) {
		return env
	}
	tunable := "glibc.malloc.hugetlb=1"
	for i := len(env) - 1; i >= 0; i-- { // the last one is the one git gets
		v, ok := strings.CutPrefix(env[i], "GLIBC_TUNABLES=")
		if !ok {
			continue
		}
		if strings.Contains(v, "glibc.malloc.hugetlb=") {
			return env
		}
		if v != "" {
			tunable = v + ":" + tunable
		}
		out := append([]string(nil), env...)
		out[i] = "GLIBC_TUNABLES=" + tunable
		return out
	}
	return append(env, "GLIBC_TUNABLES="+tunable)
}
