package gitcli

import (
	"os"
	"path/filepath"
)

// hugeIndexBytes is the index size from which git's heap is better on huge
// pages: a git diff over a 3.2 MB index (40,000 files) took 12% less time
// with them, one over 1.6 MB the same, and one over a few KB 0.6–1.4 ms
// more (BENCHMARKS.md). Those were indexes in version 2; one in version 4
// (a store borg made) reaches the size at about 1.45 times as many files.
const hugeIndexBytes = 2 << 20

// readsIndex are the git commands that load the index of the repository
// they run in. Others (rev-parse, cat-file, update-ref, log, config…)
// allocate little whatever the repository's size.
var readsIndex = map[string]bool{
	"add": true, "checkout": true, "commit": true, "diff": true, "diff-files": true,
	"diff-index": true, "ls-files": true, "merge": true, "read-tree": true, "reset": true,
	"restore": true, "rm": true, "stash": true, "status": true, "switch": true,
	"update-index": true, "write-tree": true,
}

// bigIndexRead reports whether git args, run in dir, read an index of at
// least hugeIndexBytes: the index file, or with a split index the largest
// shared index beside it. A work tree whose .git is a file (a linked
// worktree, a submodule) is followed to its git directory.
func bigIndexRead(dir string, args []string) bool {
	if len(args) == 0 || !readsIndex[args[0]] {
		return false
	}
	gitDir := dir // a bare repository, a git directory itself, or none
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		dirs, err := FindDirs(dir)
		if err != nil {
			return false
		}
		gitDir = dirs.Git
	}
	if fi, err := os.Stat(filepath.Join(gitDir, "index")); err != nil {
		return false
	} else if fi.Size() >= hugeIndexBytes {
		return true
	}
	shared, _ := filepath.Glob(filepath.Join(gitDir, "sharedindex.*"))
	for _, p := range shared {
		if fi, err := os.Stat(p); err == nil && fi.Size() >= hugeIndexBytes {
			return true
		}
	}
	return false
}
