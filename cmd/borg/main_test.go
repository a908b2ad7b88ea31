package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"borg": func() { os.Exit(run(context.Background(), os.Args, newOSEnv())) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script.
// Refresh expected output with TESTSCRIPT_UPDATE=1.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("TESTSCRIPT_UPDATE") != "",
		Setup: func(e *testscript.Env) error {
			e.Setenv("HOME", e.WorkDir+"/home")
			e.Setenv("XDG_DATA_HOME", e.WorkDir+"/home/.local/share")
			e.Setenv("GIT_AUTHOR_NAME", "borg test")
			e.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
			e.Setenv("GIT_COMMITTER_NAME", "borg test")
			e.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
			return nil
		},
	})
}
