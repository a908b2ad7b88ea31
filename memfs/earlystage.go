package memfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
)

// earlyStageMax is the most paths a commit stages through a git started
// before they are written (startEarlyStage): the commits of a learn or a
// veto, whose preparation takes milliseconds. A larger one may prepare for
// long (a sync's merge, a doctor's moves), and git's index stays free
// meanwhile.
const earlyStageMax = 8

// earlyStage is a git update-index started before the paths it stages are
// written. git takes the index lock and reads the whole index at once,
// which in a big store is most of a commit's time, and stages the paths
// when they come on its stdin, so that read runs while borg writes the
// files and the commit. A nil earlyStage stages nothing.
type earlyStage struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
}

// errNoEarlyStage is finish's answer for a stage never started.
var errNoEarlyStage = errors.New("no early stage")

// startEarlyStage starts git update-index for a commit of n paths, or
// returns nil when there are too many paths, another git holds the index
// (the commit waits for it then, as it always did), or git does not start:
// the commit then stages as it always did. The caller holds the write
// lock, and must finish or abort what it gets.
func (s *Store) startEarlyStage(n int) *earlyStage {
	if n == 0 || n > earlyStageMax {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(s.git.gitDir, "index.lock")); !errors.Is(err, os.ErrNotExist) {
		return nil
	}
	e := &earlyStage{cmd: s.GitCLI().Command(context.Background(), "update-index", "--add", "--remove", "-z", "--stdin")}
	e.cmd.Stderr = &e.stderr
	in, err := e.cmd.StdinPipe()
	if err != nil {
		return nil
	}
	e.stdin = in
	if e.cmd.Start() != nil {
		return nil
	}
	return e
}

// finish hands git the paths, now written as the commit holds them, and
// waits for it to stage them. An error (git could not take the index lock
// as it started, or failed) leaves the index as it was: the caller stages
// the paths again.
func (e *earlyStage) finish(paths []string) error {
	if e == nil {
		return errNoEarlyStage
	}
	_, werr := e.stdin.Write(nulList(paths)) // a git that exited already: a broken pipe, and Wait says why
	cerr := e.stdin.Close()
	if err := e.cmd.Wait(); err != nil {
		return &GitError{Args: e.cmd.Args[1:], Err: err, Stderr: e.stderr.String()}
	}
	return errors.Join(werr, cerr)
}

// abort ends the stage with nothing staged: git reads an empty list, and
// leaves the index as it was.
func (e *earlyStage) abort() {
	if e == nil {
		return
	}
	_ = e.stdin.Close()
	_ = e.cmd.Wait()
}
