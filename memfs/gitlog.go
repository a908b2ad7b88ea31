package memfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// This file runs the git CLI for the one job go-git does badly: the lines
// each commit added to the log files over a long history. `git log -p`
// diffs every version against its parents in C (xdiff); go-git would
// inflate and diff each version in Go, which is several times slower on a
// store of thousands of commits (BENCHMARKS.md, attribution of log lines).

// addedLine is one line a commit added to a log file.
type addedLine struct {
	Commit string // 40 hex
	Email  string // the commit's author email
	MS     int64  // the commit's author time, unix ms
	File   string // slash path, log/<node>.jsonl
	Line   []byte // without the newline; valid only during the callback
}

// gitAddedLines calls fn with every line added to log/*.jsonl by the
// commits in rev (a revision range such as "HEAD" or "a..b"), oldest first
// (parents before children). A merge commit is diffed against each parent
// (-m), so a line it took from one side shows as added against the other:
// the caller keeps the first commit that added a line.
func gitAddedLines(ctx context.Context, dir, rev string, fn func(addedLine)) error {
	args := []string{"-c", "core.quotePath=false", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "log.showSignature=false",
		"log", "--reverse", "--topo-order", "--full-history", "-m", "-p", "-U0", "--no-color",
		"--no-ext-diff", "--no-textconv", "--text", "--no-renames", "--diff-filter=AM",
		"--format=%x00%H %at %ae", rev, "--", LogDir + "/"}
	return streamGitLog(ctx, dir, args, 1<<20, func(r io.Reader) error { return parseAddedLines(r, fn) })
}

// streamGitLog runs git log with args in dir (isolated, C locale) and
// hands its output to parse as it comes, widening the pipe to pipeSize
// bytes when that is above zero. What parse leaves unread is drained, so
// that git ends; git's failure is the error, else parse's.
func streamGitLog(ctx context.Context, dir string, args []string, pipeSize int, parse func(io.Reader) error) error {
	cmd := Git{Dir: dir, Isolate: true, Env: []string{"LC_ALL=C"}}.Command(ctx, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if pipeSize > 0 {
		widenPipe(out, pipeSize)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("git log: %w", err)
	}
	perr := parse(out)
	if perr != nil {
		_, _ = io.Copy(io.Discard, out)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git log: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return perr
}

// parseAddedLines reads the output of gitAddedLines's git log.
func parseAddedLines(r io.Reader, fn func(addedLine)) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var cur addedLine
	inHunk := false
	var long []byte
	for {
		line, err := readLine(br, &long)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(line) == 0 && err != nil {
			return nil
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		switch {
		case len(line) > 0 && line[0] == 0:
			// "\0<hash> <time> <email>"
			hash, ms, email, cerr := parseCommitLine(line)
			if cerr != nil {
				return cerr
			}
			cur = addedLine{Commit: hash, MS: ms, Email: email}
			inHunk = false
		case bytes.HasPrefix(line, []byte("diff --git ")):
			// "diff --git a/log/x.jsonl b/log/x.jsonl": the b side.
			cur.File = ""
			if i := bytes.LastIndex(line, []byte(" b/")); i >= 0 {
				cur.File = string(line[i+3:])
			}
			inHunk = false
		case bytes.HasPrefix(line, []byte("@@")):
			inHunk = true
		case inHunk && len(line) > 0 && line[0] == '+':
			if strings.HasSuffix(cur.File, ".jsonl") {
				cur.Line = line[1:]
				fn(cur)
			}
		}
		if err != nil {
			return nil
		}
	}
}

// parseCommitLine reads the commit line borg's git log formats begin each
// commit with, "\x00<hash> <unix seconds>[ <rest>]": its hash, its time in
// Unix ms, and the rest of the line (an author's email, the parents).
func parseCommitLine(line []byte) (hash string, ms int64, rest string, err error) {
	f := strings.SplitN(string(line[1:]), " ", 3)
	if len(f) < 2 || !isHash(f[0]) {
		return "", 0, "", fmt.Errorf("git log: bad commit line %q", line)
	}
	secs, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return "", 0, "", fmt.Errorf("git log: bad commit time %q", line)
	}
	if len(f) == 3 {
		rest = f[2]
	}
	return f[0], secs * 1000, rest, nil
}

// readLine reads br through the next newline, however long the line: a
// line longer than br's buffer is gathered in *long, which the line then
// shares (it is valid until the next call). The error is ReadSlice's: at
// io.EOF the line is what was left without a newline.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			*long = append(*long, line...)
			continue
		}
		if len(*long) > 0 {
			line = append(*long, line...)
			*long = (*long)[:0]
		}
		return line, err
	}
}

// gitIsAncestor reports whether commit a is an ancestor of (or is) b.
func gitIsAncestor(ctx context.Context, dir, a, b string) bool {
	_, err := Git{Dir: dir, Isolate: true}.Run(ctx, nil, "merge-base", "--is-ancestor", a, b)
	return err == nil
}
