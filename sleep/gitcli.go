package sleep

// gitcli.go is the one file of sleep that runs the git CLI, for the three
// jobs memfs has no method for yet: reading a whole directory of a commit in
// one pass (memfs.ReadFileAt re-reads the directory's tree on every call,
// which is quadratic over lessons/), finding the previous sleep's trailer in
// history, and merging the sleep branch into the store's branch (a
// fast-forward or a 3-way merge that also updates the worktree and the git
// index, which go-git cannot do safely). Everything it writes goes through
// git's own locks.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"
)

// git runs the git CLI in dir and returns its stdout.
func git(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return out.Bytes(), fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return out.Bytes(), nil
}

// fileAt is one file of a commit's directory.
type fileAt struct {
	Path string // slash path from the store's root
	Data []byte
}

// readDirAt returns every regular file directly inside dir at rev, sorted by
// path, reading their blobs through one `git cat-file --batch`.
func readDirAt(ctx context.Context, storeDir, rev, dir string) ([]fileAt, error) {
	out, err := git(ctx, storeDir, nil, "ls-tree", "-z", "--full-tree", rev, dir+"/")
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", dir, rev, err)
	}
	var files []fileAt
	var blobs bytes.Buffer
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		// <mode> SP <type> SP <object> TAB <path>
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			return nil, fmt.Errorf("read %s at %s: bad ls-tree line %q", dir, rev, rec)
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 || f[1] != "blob" || (f[0] != "100644" && f[0] != "100755") {
			continue
		}
		files = append(files, fileAt{Path: string(p)})
		blobs.WriteString(f[2])
		blobs.WriteByte('\n')
	}
	if len(files) == 0 {
		return nil, nil
	}
	raw, err := git(ctx, storeDir, &blobs, "cat-file", "--batch")
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", dir, rev, err)
	}
	r := bufio.NewReader(bytes.NewReader(raw))
	for i := range files {
		header, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: short cat-file output", dir, rev)
		}
		f := strings.Fields(header)
		if len(f) != 3 {
			return nil, fmt.Errorf("read %s at %s: bad cat-file header %q", dir, rev, header)
		}
		size, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("read %s at %s: bad cat-file size %q", dir, rev, header)
		}
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("read %s at %s: %w", dir, rev, err)
		}
		if _, err := r.ReadByte(); err != nil { // the LF after the content
			return nil, fmt.Errorf("read %s at %s: %w", dir, rev, err)
		}
		files[i].Data = data
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// lastSleepAt finds the latest sleep date recorded in the history of rev:
// the greatest Borg-Sleep trailer among the most recent sleep commits. It
// returns the zero time when no sleep has been merged.
func lastSleepAt(ctx context.Context, storeDir, rev string) (time.Time, error) {
	out, err := git(ctx, storeDir, nil, "log", "-n", "64", "--format=%(trailers:key="+trailerDate+",valueonly,separator=%x20)",
		"--grep=^"+trailerDate+": ", rev)
	if err != nil {
		return time.Time{}, fmt.Errorf("find last sleep: %w", err)
	}
	var last time.Time
	for _, f := range strings.Fields(string(out)) {
		d, err := time.Parse(time.DateOnly, f)
		if err == nil && d.After(last) {
			last = d
		}
	}
	return last, nil
}

// headBranch is the full ref name HEAD points at in the store.
func headBranch(ctx context.Context, storeDir string) (string, error) {
	out, err := git(ctx, storeDir, nil, "symbolic-ref", "-q", "HEAD")
	if err != nil {
		return "", fmt.Errorf("read HEAD: %w (the store must be on a branch)", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// mergeBranch merges branch into the store's checked-out branch with the git
// CLI: a fast-forward when the store's branch has not moved since the sleep
// planned from it, otherwise a 3-way merge commit. The CLI updates the
// worktree and the git index and refuses to overwrite local changes. A
// conflicted merge is aborted and reported with ErrMergeConflict.
func mergeBranch(ctx context.Context, storeDir, branch string, when time.Time) (fastForward bool, err error) {
	if _, err := git(ctx, storeDir, nil, "merge", "--ff-only", "-q", branch); err == nil {
		return true, nil
	}
	args := []string{}
	if out, _ := git(ctx, storeDir, nil, "config", "user.email"); len(bytes.TrimSpace(out)) == 0 {
		args = append(args, "-c", "user.name=borg", "-c", "user.email=borg@localhost")
	}
	stamp := strconv.FormatInt(when.Unix(), 10) + " +0000"
	args = append(args, "merge", "--no-ff", "--no-edit", "-q", "-m", "Merge "+branch, branch)
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", storeDir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
		"GIT_AUTHOR_DATE="+stamp, "GIT_COMMITTER_DATE="+stamp)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &errb, &errb
	if err := cmd.Run(); err != nil {
		_, _ = git(ctx, storeDir, nil, "merge", "--abort")
		if strings.Contains(errb.String(), "CONFLICT") {
			return false, fmt.Errorf("merge %s: %w; open a pull request instead", branch, ErrMergeConflict)
		}
		return false, fmt.Errorf("merge %s: %w: %s", branch, err, strings.TrimSpace(errb.String()))
	}
	return false, nil
}
