package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/memfs"
)

// A background reindex is a detached `borg reindex --background TOKEN`
// that a hook starts when bringing the search state up to date would not fit
// its budget. Its progress is a small JSON file beside the index, so that
// `borg doctor` can say the index is behind and why, and a test (or a
// script) can wait for the reindex to finish instead of guessing how long it
// takes.

// backgroundStatus is the content of .borg/index/reindex.json.
type backgroundStatus struct {
	Token      string `json:"token"`                 // names one start
	StartedMS  int64  `json:"started_ms"`            // when the hook started it
	PID        int    `json:"pid,omitempty"`         // the reindex process, once it runs
	FinishedMS int64  `json:"finished_ms,omitempty"` // when it finished (0: not yet)
	Result     string `json:"result,omitempty"`      // its one-line outcome
	Failed     bool   `json:"failed,omitempty"`
}

func backgroundStatusPath(s *memfs.Store) string {
	return filepath.Join(indexDir(s), "reindex.json")
}

// reindexLockPath is held by a reindex for as long as it runs: a second
// background reindex started meanwhile leaves the work to the first.
func reindexLockPath(s *memfs.Store) string {
	return filepath.Join(indexDir(s), "reindex.lock")
}

// readBackgroundStatus reads the last background reindex's status; ok is
// false when none was ever started (or the file is unreadable).
func readBackgroundStatus(s *memfs.Store) (backgroundStatus, bool) {
	data, err := os.ReadFile(backgroundStatusPath(s))
	if err != nil {
		return backgroundStatus{}, false
	}
	var st backgroundStatus
	if json.Unmarshal(data, &st) != nil || st.Token == "" {
		return backgroundStatus{}, false
	}
	return st, true
}

func writeBackgroundStatus(s *memfs.Store, st backgroundStatus) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(indexDir(s), 0o755); err != nil {
		return err
	}
	return memfs.WriteFileAtomic(backgroundStatusPath(s), append(data, '\n'), 0o644)
}

// lockReindex takes the store's reindex lock, waiting as LockPath does.
func lockReindex(s *memfs.Store, wait time.Duration) (func(), error) {
	if err := os.MkdirAll(indexDir(s), 0o755); err != nil {
		return nil, err
	}
	return memfs.LockPath(reindexLockPath(s), wait)
}

// reindexRunning reports whether a reindex holds the store's reindex lock.
func reindexRunning(s *memfs.Store) bool {
	unlock, err := lockReindex(s, 0)
	if err != nil {
		return errors.Is(err, memfs.ErrLocked)
	}
	unlock()
	return false
}

// startBackgroundReindex starts a detached `borg reindex` for the store,
// unless one is running already. A process starts at most one, whatever
// asked for it (a large sync, a summary rebuild). The error is that of
// starting it, for the hook's notice.
func startBackgroundReindex(s *memfs.Store) error {
	reindexOnce.Do(func() { reindexErr = startReindex(s) })
	return reindexErr
}

var (
	reindexOnce sync.Once
	reindexErr  error
)

func startReindex(s *memfs.Store) error {
	if reindexRunning(s) {
		return nil
	}
	exe, err := os.Executable()
	if err != nil || exe == "" {
		// As the hook was run: borg on PATH, or its path.
		if exe, err = exec.LookPath(os.Args[0]); err != nil {
			return err
		}
	}
	now := time.Now()
	st := backgroundStatus{Token: strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(now.UnixNano(), 36), StartedMS: now.UnixMilli()}
	if err := writeBackgroundStatus(s, st); err != nil {
		return fmt.Errorf("record background reindex: %w", err)
	}
	cmd := exec.Command(exe, "reindex", "--store", s.Dir(), "--background", st.Token)
	cmd.Env = backgroundEnv(os.Environ())
	detach(cmd)
	if err := cmd.Start(); err != nil {
		st.FinishedMS, st.Failed, st.Result = time.Now().UnixMilli(), true, "could not start: "+err.Error()
		_ = writeBackgroundStatus(s, st)
		return err
	}
	return cmd.Process.Release()
}

// backgroundEnv is env for a background borg a command starts: without
// the developer's profile switches, whose file names the profile of the
// command that was run (a background reindex would write over it).
func backgroundEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "BORG_CPUPROFILE=") && !strings.HasPrefix(kv, "BORG_MEMPROFILE=") {
			out = append(out, kv)
		}
	}
	return out
}

// describeBackground is doctor's line on the last background reindex.
func describeBackground(st backgroundStatus, now time.Time) string {
	ago := func(ms int64) string {
		return now.Sub(time.UnixMilli(ms)).Round(time.Second).String() + " ago"
	}
	switch {
	case st.FinishedMS == 0 && st.PID == 0:
		return "a background reindex was started " + ago(st.StartedMS) + " and has not begun"
	case st.FinishedMS == 0:
		return fmt.Sprintf("a background reindex (pid %d) is running since %s", st.PID, ago(st.StartedMS))
	case st.Failed:
		return "the last background reindex failed " + ago(st.FinishedMS) + ": " + st.Result
	}
	return "the last background reindex finished " + ago(st.FinishedMS) + ": " + strings.TrimSpace(st.Result)
}
