package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/borg-memory/borg/memfs/fsutil/tmpfstest"
)

// testBinary is the borg the tests that run borg as a process share.
var testBinary struct {
	once      sync.Once
	dir, path string
	err       error
}

// installEnv and installTags are how the README installs borg, and so how
// the tests and scripts/build-borg.sh build the binary they time: static
// (no dynamic loader at each start) and without urfave/cli's man-page and
// markdown generator, which borg never calls but whose initialisers would
// run at every start. TestReadmeInstallsAsTestsBuild holds the README to it.
const (
	installEnv  = "CGO_ENABLED=0"
	installTags = "urfave_cli_no_docs"
)

// borgBinary is borg built from this package (and borg-mcp beside it),
// once per test process, as the README installs them, in a directory
// anyone can read and run it from (a test runs it as user nobody). It is the one way the tests get a borg binary;
// testscript's scripts run the test binary itself as borg. TestMain removes
// it after the tests.
func borgBinary(tb testing.TB) string {
	tb.Helper()
	b := &testBinary
	b.once.Do(func() {
		b.dir, b.err = os.MkdirTemp("", "borg-bin-")
		if b.err != nil {
			return
		}
		if b.err = os.Chmod(b.dir, 0o755); b.err != nil {
			return
		}
		b.path = filepath.Join(b.dir, "borg")
		// borg-mcp beside it, as the README installs them: borg mcp runs it.
		cmd := exec.Command("go", "build", "-tags", installTags, "-o", b.dir+string(filepath.Separator), ".", "../borg-mcp")
		cmd.Env = append(goEnv(), installEnv)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// startEnv is the environment the suite started with, before any test set
// HOME or XDG_CACHE_HOME to a folder of its own (t.Setenv): the go command
// finds its build and module caches there.
var startEnv []string

// goEnv is the environment a test runs the go command in: the suite's own
// at its start, so that a build from a test that moved HOME uses the
// caches every other build does (from an empty cache, borg's build takes
// more than a minute and fetches its modules again).
func goEnv() []string {
	if startEnv == nil {
		return os.Environ()
	}
	return slices.Clone(startEnv)
}

// removeBorgBinary removes what borgBinary built.
func removeBorgBinary() {
	if testBinary.dir != "" {
		_ = os.RemoveAll(testBinary.dir)
	}
}

// cleanupM runs the tests with their temporary files in memory where it
// can (tmpfstest.Use: the suite's stores and git repositories cost the
// kernel several times more on a disk), then removes the shared borg
// binary and that folder. testscript runs it only for the tests, not in the
// test binary's runs as a script's borg.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	tmp := tmpfstest.Use()
	startEnv = os.Environ()
	code := c.m.Run()
	removeBorgBinary()
	tmp()
	return code
}
