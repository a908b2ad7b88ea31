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
	testscript.Main(m, map[string]func(){
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
				if neg || len(args) != 1 {
					ts.Fatalf("usage: waitreindex STORE")
				}
				s, err := memfs.Open(ts.MkAbs(args[0]))
				ts.Check(err)
				for bound := time.Now().Add(2 * time.Minute); ; {
					st, ok := readBackgroundStatus(s)
					if !ok {
						ts.Fatalf("no background reindex was started in %s", args[0])
					}
					if st.FinishedMS != 0 {
						if st.Failed {
							ts.Fatalf("background reindex failed: %s", st.Result)
						}
						ts.Logf("background reindex: %s", st.Result)
						return
					}
					if time.Now().After(bound) {
						ts.Fatalf("background reindex still running after 2 minutes: %+v", st)
					}
					time.Sleep(10 * time.Millisecond)
				}
			},
			// waitsync STORE waits until the background sync a hook started
			// in STORE has finished, and fails if it failed (a bound only
			// stops a hung sync from hanging the test).
			"waitsync": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: waitsync STORE")
				}
				s, err := memfs.Open(ts.MkAbs(args[0]))
				ts.Check(err)
				for bound := time.Now().Add(2 * time.Minute); ; {
					st, ok := readAutosync(s)
					if !ok {
						ts.Fatalf("no background sync was started in %s", args[0])
					}
					if st.FinishedMS != 0 {
						if st.Failed {
							ts.Fatalf("background sync failed: %s", st.Result)
						}
						ts.Logf("background sync: %s", st.Result)
						return
					}
					if time.Now().After(bound) {
						ts.Fatalf("background sync still running after 2 minutes: %+v", st)
					}
					time.Sleep(10 * time.Millisecond)
				}
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
