package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/borg-memory/borg/memfs"
)

func TestMain(m *testing.M) {
	// Under -race every borg a test starts (a script's exec, a hook an
	// agent runs, a kill loop's child) is a race-built binary, which
	// sleeps a second before it exits (the race runtime's atexit_sleep_ms,
	// left for late reports of other goroutines; a race is still reported
	// and fails the process). The children inherit this; testscript passes
	// GORACE through. A GORACE of the caller's own is kept.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	testscript.Main(cleanupM{m}, map[string]func(){
		"borg": func() { os.Exit(run(context.Background(), os.Args, newOSEnv())) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script.
// Refresh expected output with TESTSCRIPT_UPDATE=1.
func TestScripts(t *testing.T) { testscript.Run(t, scriptParams("testdata/script")) }

// TestAdversarialScripts runs the adversarial suite's scripts: each file in
// testdata/adversarial is one attack from the hardening issue (a hostile
// teammate's push, a hostile string, an unlucky user), named for it. Every
// Go test of the suite is named TestAdversarial…, so
// go test -run Adversarial ./... runs all of it.
func TestAdversarialScripts(t *testing.T) { testscript.Run(t, scriptParams("testdata/adversarial")) }

// scriptParams are the testscript settings every script directory shares.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("TESTSCRIPT_UPDATE") != "",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// chop FILE removes FILE's final newline, to make a torn last line.
			"chop": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: chop FILE")
				}
				p := ts.MkAbs(args[0])
				data, err := os.ReadFile(p)
				ts.Check(err)
				ts.Check(os.WriteFile(p, bytes.TrimSuffix(data, []byte("\n")), 0o644))
			},
			// waitreindex STORE waits until the background reindex a hook
			// started in STORE has finished, and fails if it failed. It
			// waits for the event, not for a time: the bound only stops a
			// hung reindex from hanging the test.
			"waitreindex": func(ts *testscript.TestScript, neg bool, args []string) {
				waitBackground(ts, neg, args, "reindex", func(s *memfs.Store) (bool, bool, bool, string) {
					st, ok := readBackgroundStatus(s)
					return ok, st.FinishedMS != 0, st.Failed, st.Result
				})
			},
			// waitsync STORE waits until the background sync a hook started
			// in STORE has finished, and fails if it failed.
			"waitsync": func(ts *testscript.TestScript, neg bool, args []string) {
				waitBackground(ts, neg, args, "sync", func(s *memfs.Store) (bool, bool, bool, string) {
					st, ok := readAutosync(s)
					return ok, st.FinishedMS != 0, st.Failed, st.Result
				})
			},
			// flip FILE N: inverts a bit of the Nth byte from the end.
			"flip": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: flip FILE N")
				}
				p := ts.MkAbs(args[0])
				data, err := os.ReadFile(p)
				ts.Check(err)
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				if n < 1 || n > len(data) {
					ts.Fatalf("flip: %s has %d bytes", p, len(data))
				}
				data[len(data)-n] ^= 0x40
				ts.Check(os.WriteFile(p, data, 0o644))
			},
			"writelog": writeLogCmd,
			// nextsecond waits until the wall clock enters its next second,
			// so that a lesson learned after it is created later than one
			// learned before (a lesson's created time has whole seconds).
			"nextsecond": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 0 {
					ts.Fatalf("usage: nextsecond")
				}
				now := time.Now()
				time.Sleep(now.Truncate(time.Second).Add(time.Second).Sub(now) + time.Millisecond)
			},
			// gen FILE BYTES writes BYTES bytes of words to FILE.
			"gen": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 2 {
					ts.Fatalf("usage: gen FILE BYTES")
				}
				n, err := strconv.Atoi(args[1])
				ts.Check(err)
				word := []byte("lorem ipsum dolor sit amet ")
				data := bytes.Repeat(word, n/len(word)+1)[:n]
				ts.Check(os.WriteFile(ts.MkAbs(args[0]), data, 0o644))
			},
		},
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir+"/home")
			e.Setenv("XDG_DATA_HOME", e.WorkDir+"/home/.local/share")
			e.Setenv("GIT_AUTHOR_NAME", "borg test")
			e.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			e.Setenv("GIT_COMMITTER_NAME", "borg test")
			e.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			return nil
		},
	}
}

// waitBackground waits until the background job (a reindex, a sync) a hook
// started in the store args[0] names has finished, and fails if it failed.
// It waits for the event, not for a time: the bound only stops a hung job
// from hanging the test.
func waitBackground(ts *testscript.TestScript, neg bool, args []string, job string, status func(*memfs.Store) (started, finished, failed bool, result string)) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: wait%s STORE", job)
	}
	s, err := memfs.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	for bound := time.Now().Add(2 * time.Minute); ; {
		started, finished, failed, result := status(s)
		if !started {
			ts.Fatalf("no background %s was started in %s", job, args[0])
		}
		if finished {
			if failed {
				ts.Fatalf("background %s failed: %s", job, result)
			}
			ts.Logf("background %s: %s", job, result)
			return
		}
		if time.Now().After(bound) {
			ts.Fatalf("background %s still running after 2 minutes: %s", job, result)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
