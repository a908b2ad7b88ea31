package memfs

// gitlock.go is how borg treats git's lock files (index.lock, HEAD.lock,
// refs/…/<name>.lock, packed-refs.lock): as git's alone. borg never creates
// or removes one. Its own writes are serialised by the store's write lock
// (writes.go); the git commands it runs take git's locks as git does, and
// a lock another git holds is waited for, up to lockWait. A lock that
// stays is named, with its fix, in the error of the write that met it and
// by doctor: only its owner or the user can tell that no git holds it any
// more (a git commit whose editor is still open holds index.lock for as
// long as the editor stays open). A killed borg's git is left to finish
// holding the store's write lock (GitCLI), so it removes its own locks.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/borg-memory/borg/memfs/gitcli"
)

// lockWait bounds how long borg waits for a lock another git holds.
const lockWait = 10 * time.Second

// staleLockAge is the age from which doctor calls a git lock stale: git
// holds its locks only while it writes, except around an editor or a hook.
const staleLockAge = 10 * time.Minute

// isLockBusy reports whether err is git failing on a lock file another
// process holds.
func isLockBusy(err error) bool { return lockOf(err) != "" }

// lockOf is the lock file err says git failed on, or "".
func lockOf(err error) string {
	var ge *GitError
	if !errors.As(err, &ge) {
		return ""
	}
	return gitcli.LockInStderr(ge.Stderr)
}

// staleLockFile reports whether the lock file p is older than git holds a
// lock: no one is going to release it, so waiting for it is pointless.
func staleLockFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && time.Since(fi.ModTime()) > staleLockAge
}

// runGitWaiting runs git in the store (runGit) with stdin, and runs it
// again, for up to lockWait, while it fails on a lock another git holds
// (and is not stale).
func (s *Store) runGitWaiting(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	deadline := time.Now().Add(lockWait)
	delay := time.Millisecond
	for {
		var in io.Reader
		if stdin != nil {
			in = bytes.NewReader(stdin)
		}
		out, err := s.runGit(ctx, in, args...)
		if err == nil || !isLockBusy(err) || time.Now().After(deadline) || staleLockFile(lockOf(err)) {
			return out, err
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(delay):
		}
		delay = min(delay*2, 50*time.Millisecond)
	}
}

// waitIndexLock waits up to lockWait for the worktree's index.lock to go,
// and names it with its fix when it stays (at once when it is stale).
func (s *Store) waitIndexLock() error {
	p := filepath.Join(s.git.gitDir, "index.lock")
	deadline := time.Now().Add(lockWait)
	delay := time.Millisecond
	for {
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if time.Now().After(deadline) || time.Since(fi.ModTime()) > staleLockAge {
			return fmt.Errorf("%s exists (%s old): a git command is writing the store's index; %s", p, time.Since(fi.ModTime()).Round(time.Second), gitcli.LockFix(p))
		}
		time.Sleep(delay)
		delay = min(delay*2, 50*time.Millisecond)
	}
}

// linkNew creates the file p holding data, atomically and only if p does
// not exist (os.ErrExist then): data goes to a temp file in dir, which is
// hard-linked to p and then removed.
func linkNew(dir, p string, data []byte) error {
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	if cerr != nil {
		return cerr
	}
	return os.Link(tmp, p)
}

// tmpPrefix names the temp files linkNew writes.
const tmpPrefix = "borg-tmp-"

// relGit is p relative to the store's root when it is inside it.
func (s *Store) relGit(p string) string {
	if r, err := filepath.Rel(s.dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return p
}
