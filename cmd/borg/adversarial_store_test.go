package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestAdversarialWhatIsAStore: a project repository with a lessons/
// folder is not taken for a store (learn commits nothing into the
// project's branch); with HOME and XDG_DATA_HOME unset there is no default
// store, and nothing is made relative to the working directory; a store
// another user owns is not written (root running borg in a user's store
// leaves no file the user cannot write), and is still read.
func TestAdversarialWhatIsAStore(t *testing.T) {
	vars := adversarialStore(t)

	t.Run("project with a lessons folder", func(t *testing.T) {
		proj := t.TempDir()
		testGit(t, proj, nil, "init", "-q")
		if err := os.MkdirAll(filepath.Join(proj, "lessons"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proj, "lessons", "intro.md"), []byte("# Lesson one\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		testGit(t, proj, nil, "add", "-A")
		testGit(t, proj, nil, "commit", "-q", "-m", "course material")
		head := testGit(t, proj, nil, "rev-parse", "HEAD")
		code, _, errs := inProcess(t, vars, "", "learn", "--store", proj, "Cache the course builds")
		if code == 0 || !strings.Contains(errs, "not a borg store") || !strings.Contains(errs, "mark") {
			t.Fatalf("learn into a project: exit %d %q; want it refused as no store", code, errs)
		}
		if got := testGit(t, proj, nil, "rev-parse", "HEAD"); got != head {
			t.Fatalf("learn committed into the project's branch")
		}
		if _, err := os.Stat(filepath.Join(proj, ".borg")); err == nil {
			t.Fatalf("borg wrote its private state into the project")
		}
	})

	t.Run("no HOME, no XDG", func(t *testing.T) {
		wd := t.TempDir()
		t.Chdir(wd)
		t.Setenv("HOME", "")
		t.Setenv("XDG_DATA_HOME", "")
		bare := map[string]string{"HOME": "", "XDG_DATA_HOME": "", "BORG_STORE": ""}
		for _, args := range [][]string{{"init"}, {"learn", "Pin the toolchain"}, {"list"}} {
			code, _, errs := inProcess(t, bare, "", args...)
			if code == 0 || !strings.Contains(errs, "BORG_STORE") {
				t.Errorf("borg %s without HOME: exit %d %q; want it to ask for BORG_STORE", args[0], code, errs)
			}
		}
		if entries, _ := os.ReadDir(wd); len(entries) != 0 {
			t.Errorf("borg made %s in the working directory", entries[0].Name())
		}
		t.Setenv("XDG_DATA_HOME", "relative/data")
		bare["XDG_DATA_HOME"] = "relative/data"
		if code, _, _ := inProcess(t, bare, "", "init"); code == 0 {
			t.Errorf("borg init made a store under a relative XDG_DATA_HOME")
		}
	})

	t.Run("another user's store", func(t *testing.T) {
		if runtime.GOOS == "windows" || os.Geteuid() != 0 {
			t.Skip("needs root, to run borg as another user than the store's owner")
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("no setpriv")
		}
		store := vars["BORG_STORE"]
		// Everyone may write it: only ownership tells whose it is.
		_ = filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				_ = os.Chmod(p, 0o777)
			}
			return nil
		})
		bin := nobodyBinary(t)
		run := func(args ...string) (int, string, string) {
			cmd := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
			cmd.Env = append(os.Environ(), "BORG_STORE="+store, "HOME="+filepath.Dir(bin), "BORG_ENGINEER=bob@example.com")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return code, out.String(), errb.String()
		}
		code, _, errs := run("learn", "Tag releases from main only")
		if code == 0 || !strings.Contains(errs, "belongs to uid 0") || !strings.Contains(errs, "safe.directory") {
			t.Errorf("learn in another user's store: exit %d %q; want a refusal naming the owner", code, errs)
		}
		if code, out, errs := run("list"); code != 0 || !strings.Contains(out, "run-migrations") {
			t.Errorf("list of another user's store: exit %d %s %s", code, out, errs)
		}
		_ = filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == 65534 {
					t.Errorf("borg left %s owned by the other user", p)
				}
			}
			return nil
		})
	})
}
