package main

// The adversarial suite's Go tests (the scripts are in testdata/adversarial):
// each is one attack or accident from the hardening issue, named for it.
// go test -run Adversarial ./... runs the whole suite.

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// inProcess runs borg in this process with the given environment and
// returns its exit code, stdout and stderr.
func inProcess(t *testing.T, vars map[string]string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{in: strings.NewReader(stdin), out: &out, err: &errb, now: time.Now,
		getenv: func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			return os.Getenv(k)
		}}
	code := run(context.Background(), append([]string{"borg"}, args...), e)
	return code, out.String(), errb.String()
}

// adversarialStore makes a store with two lessons and returns its
// environment.
func adversarialStore(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	vars := map[string]string{
		"BORG_STORE": filepath.Join(dir, "store"), "BORG_ENGINEER": "alice@example.com",
		"HOME": dir, "XDG_DATA_HOME": filepath.Join(dir, "share"),
		"GIT_AUTHOR_NAME": "alice", "GIT_AUTHOR_EMAIL": "alice@example.com",
		"GIT_COMMITTER_NAME": "alice", "GIT_COMMITTER_EMAIL": "alice@example.com",
	}
	for k, v := range vars {
		t.Setenv(k, v) // git, run by borg, reads these too
	}
	for _, args := range [][]string{
		{"init"},
		{"learn", "Run migrations before the integration tests"},
		{"learn", "Pin the Go toolchain in go.mod"},
	} {
		if code, _, stderr := inProcess(t, vars, "", args...); code != 0 {
			t.Fatalf("borg %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
	}
	return vars
}

// TestAdversarialEscapesInFileNames: a teammate commits a lesson file whose
// name carries terminal escape sequences and a bidi override. Whatever borg
// prints about it (doctor, list, recall, errors) reaches the terminal with
// those characters spelled out, never raw.
func TestAdversarialEscapesInFileNames(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows file names cannot hold control characters")
	}
	vars := adversarialStore(t)
	hostile := "x\x1b]0;owned\x07\x1b[2J\u202egnp.html"
	if err := os.WriteFile(filepath.Join(vars["BORG_STORE"], "lessons", hostile), []byte("<p>hi</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"doctor"}, {"doctor", "--json"}, {"list"}, {"recall", "migrations"}, {"show", hostile}, {"reindex"}} {
		_, stdout, stderr := inProcess(t, vars, "", args...)
		for _, s := range []string{stdout, stderr} {
			if strings.ContainsAny(s, "\x1b\x07\u202e") {
				t.Errorf("borg %s printed a raw control character: %q", args[0], s)
			}
		}
		if args[0] == "doctor" && !strings.Contains(stdout, `\u001b]0;owned\u0007`) {
			t.Errorf("borg %s does not name the file, spelled out: %q", strings.Join(args, " "), stdout)
		}
	}
}

// TestAdversarialReadOnlyStore: a store this user cannot write (another
// user's checkout, a read-only mount) still answers recall, list, show and
// doctor, after a teammate's new lesson left the index behind; recall
// searches in memory and saves nothing.
func TestAdversarialReadOnlyStore(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX permissions")
	}
	vars := adversarialStore(t)
	store := vars["BORG_STORE"]
	if code, _, stderr := inProcess(t, vars, "", "recall", "migrations"); code != 0 {
		t.Fatalf("recall: %s", stderr)
	}
	// A new lesson after the index was saved: the index is behind.
	if code, _, stderr := inProcess(t, vars, "", "learn", "Vendor the protobuf plugins"); code != 0 {
		t.Fatalf("learn: %s", stderr)
	}
	before := treeState(t, store)
	readOnly(t, store)
	t.Cleanup(func() { writable(store) })

	borg := func(args ...string) (int, string, string) {
		if os.Geteuid() != 0 {
			return inProcess(t, vars, "", args...)
		}
		// root writes through any permission: run borg as nobody.
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv: no way to be a user who cannot write")
		}
		bin := nobodyBinary(t)
		cmd := exec.Command(setpriv, append([]string{"--reuid=65534", "--regid=65534", "--clear-groups", bin}, args...)...)
		cmd.Env = append(os.Environ(), "BORG_STORE="+store, "HOME="+filepath.Dir(bin), "BORG_ENGINEER=bob@example.com")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err = cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, out.String(), errb.String()
	}
	code, stdout, stderr := borg("recall", "protobuf plugins")
	if code != 0 || !strings.Contains(stdout, "vendor-protobuf-plugins") {
		t.Fatalf("recall on a read-only store: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"list"}, {"show", "pin-go-toolchain-go-mod-95d8"}, {"doctor"}} {
		if code, _, stderr := borg(args...); code != 0 {
			t.Errorf("borg %s on a read-only store: exit %d: %s", args[0], code, stderr)
		}
	}
	if after := treeState(t, store); after != before {
		t.Errorf("the read-only store changed:\nbefore %s\nafter  %s", before, after)
	}
}

// nobodyBinary is borg where user nobody can run it and reach the store.
func nobodyBinary(t *testing.T) string {
	t.Helper()
	bin := borgBinary(t)
	// nobody must reach the store too: open every directory above it for
	// reading (t.TempDir makes them private).
	for d := filepath.Dir(os.Getenv("BORG_STORE")); d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755)
	}
	return bin
}

// readOnly takes write permission from everything under dir, and gives
// read permission to all.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o444)
		if d.IsDir() {
			mode = 0o555
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writable(dir string) {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
}

// treeState lists every path under dir with its size and modification time.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !d.IsDir() {
			fmt.Fprintf(&b, "%s:%d:%d ", rel, fi.Size(), fi.ModTime().UnixNano())
		} else {
			fmt.Fprintf(&b, "%s/ ", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
