package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/borg-memory/borg/memfs"
)

// TestAdversarialErrorsSayWhatHappened: a failure says what happened and
// the fix. An empty node id file is replaced and learn commits; a node id
// file that holds garbage is named, and no half-learned lesson is left for
// a retry to call a duplicate; a refused clone says it was refused and how
// to check access; a full disk during fetch is reported as a
// full disk, not an unreachable remote; a store this user cannot write is
// reported as such by sync and learn, not as another sync running.
func TestAdversarialErrorsSayWhatHappened(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX permissions and a shell script standing in for git")
	}
	vars := adversarialStore(t)
	store := vars["BORG_STORE"]
	node := filepath.Join(store, ".borg", "node")
	lessonFiles := func() int {
		s, err := memfs.Open(store)
		if err != nil {
			t.Fatal(err)
		}
		files, _ := s.LessonFiles()
		return len(files)
	}

	t.Run("empty node file", func(t *testing.T) {
		if err := os.WriteFile(node, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := inProcess(t, vars, "", "learn", "Keep the staging database on the small instance")
		if code != 0 {
			t.Fatalf("learn with an empty node file: exit %d: %s", code, errs)
		}
		if st := testGit(t, store, nil, "status", "--porcelain", "--", "lessons"); st != "" {
			t.Fatalf("a learned lesson is not committed:\n%s", st)
		}
	})
	t.Run("node file with garbage", func(t *testing.T) {
		if err := os.WriteFile(node, []byte("!!not a node!!\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := lessonFiles()
		code, _, errs := inProcess(t, vars, "", "learn", "Run the linters before pushing")
		if code == 0 || !strings.Contains(errs, node) || !strings.Contains(errs, "remove it") {
			t.Fatalf("learn with a bad node file: exit %d %q; want it to name %s and the fix", code, errs, node)
		}
		if n := lessonFiles(); n != before {
			t.Fatalf("a refused learn left a lesson file (%d files, %d before)", n, before)
		}
		if err := os.Remove(node); err != nil {
			t.Fatal(err)
		}
		if code, _, errs := inProcess(t, vars, "", "learn", "Run the linters before pushing"); code != 0 {
			t.Fatalf("the retry after the fix: exit %d: %s", code, errs)
		}
	})

	t.Run("refused clone", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "no-such-store.git")
		code, _, errs := inProcess(t, vars, "", "init", "--store", filepath.Join(t.TempDir(), "clone"), "--remote", missing)
		if code == 0 || !strings.Contains(errs, "refused the clone or does not exist") || !strings.Contains(errs, "git ls-remote "+missing) {
			t.Fatalf("init from a remote that is not there: exit %d %q; want it to say the clone was refused and how to check", code, errs)
		}
	})

	root := filepath.Dir(store)
	remote := filepath.Join(root, "remote.git")
	testGit(t, root, nil, "init", "-q", "--bare", "-b", "main", remote)
	testGit(t, store, nil, "remote", "add", "origin", remote)
	if code, _, errs := inProcess(t, vars, "", "sync"); code != 0 {
		t.Fatalf("first sync: exit %d: %s", code, errs)
	}
	mate := filepath.Join(root, "mate")
	testGit(t, root, nil, "clone", "-q", remote, mate)
	if err := os.WriteFile(filepath.Join(mate, "notes.txt"), []byte("a teammate's commit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testGit(t, mate, nil, "add", "notes.txt")
	testGit(t, mate, nil, "commit", "-q", "-m", "teammate")
	testGit(t, mate, nil, "push", "-q", "origin", "HEAD:main")

	t.Run("full disk during fetch", func(t *testing.T) {
		real, err := exec.LookPath("git")
		if err != nil {
			t.Fatal(err)
		}
		shim := t.TempDir()
		script := "#!/bin/sh\nfor a in \"$@\"; do\n  if [ \"$a\" = fetch ]; then\n" +
			"    echo 'error: unable to write file .git/objects/pack/tmp_pack_q1: No space left on device' >&2\n" +
			"    echo 'fatal: index-pack failed' >&2\n    exit 128\n  fi\ndone\nexec " + real + " \"$@\"\n"
		if err := os.WriteFile(filepath.Join(shim, "git"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", shim+string(os.PathListSeparator)+os.Getenv("PATH"))
		code, _, errs := inProcess(t, vars, "", "sync")
		if code == 0 || !strings.Contains(errs, "is full") || strings.Contains(errs, "unreachable") {
			t.Fatalf("sync on a full disk: exit %d %q; want it to say the disk is full", code, errs)
		}
	})

	t.Run("store this user cannot write", func(t *testing.T) {
		if os.Geteuid() == 0 {
			if _, err := exec.LookPath("setpriv"); err != nil {
				t.Skip("running as root without setpriv: no way to be a user who cannot write")
			}
		}
		readOnly(t, store)
		t.Cleanup(func() { writable(store) })
		borg := func(args ...string) (int, string) {
			if os.Geteuid() != 0 {
				code, _, errs := inProcess(t, vars, "", args...)
				return code, errs
			}
			bin := nobodyBinary(t)
			cmd := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
			cmd.Env = append(os.Environ(), "BORG_STORE="+store, "HOME="+filepath.Dir(bin), "BORG_ENGINEER=bob@example.com")
			var errb bytes.Buffer
			cmd.Stderr = &errb
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return code, errb.String()
		}
		for _, args := range [][]string{{"sync"}, {"learn", "Tag releases from main only"}} {
			code, errs := borg(args...)
			if code == 0 || !strings.Contains(errs, "cannot write the store") || strings.Contains(errs, "another sync") {
				t.Errorf("borg %s on a store this user cannot write: exit %d %q; want it to say so", args[0], code, errs)
			}
		}
	})
}
