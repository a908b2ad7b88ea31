package memfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/borg-memory/borg/domain"
)

// ErrUnreachable reports that sync could not talk to the remote (network,
// credentials, a remote that does not exist): nothing was changed.
var ErrUnreachable = errors.New("remote unreachable")

// ErrRemoteRewritten reports that the remote's branch no longer holds the
// commit this store last synced with it: a force-push rewrote its history
// (a purge, say). Nothing was merged or pushed: a merge would
// bring the old history back. SyncOptions.AcceptRewrite moves the store
// onto the rewritten branch instead.
var ErrRemoteRewritten = errors.New("the remote's branch was rewritten")

// ErrSyncConflict reports a merge conflict sync does not resolve by itself
// (a file other than a lesson or a log); the merge was aborted.
var ErrSyncConflict = errors.New("conflict sync cannot resolve")

// SyncOptions tune Store.Sync.
type SyncOptions struct {
	// Remote is the git remote to sync with ("" means origin).
	Remote string
	// Attempts bounds the fetch-merge-push rounds when the remote moves
	// between this node's fetch and its push (0 means 5).
	Attempts int
	// Wait bounds how long to wait for another sync of this store to
	// finish (0: wait as long as it takes; negative: do not wait, and
	// return ErrLocked).
	Wait time.Duration
	// AcceptRewrite: when the remote's branch was rewritten (it no longer
	// holds the commit this store last synced), move the store onto it,
	// committing on top the changes made here since the last sync (its
	// lessons, this node's log lines), instead of failing with
	// ErrRemoteRewritten.
	AcceptRewrite bool
}

// SyncResult says what a sync did.
type SyncResult struct {
	Remote string `json:"remote"`
	Branch string `json:"branch"`
	// Committed is set when this node's log lines were committed first.
	Committed bool `json:"committed_log"`
	// Received counts the commits brought in from the remote.
	Received int `json:"received"`
	// Merged is set when a merge commit was made (both sides had moved).
	Merged bool `json:"merged"`
	// Joined is set when the merge joined two histories that share no
	// commit, each begun by a borg init of the same files (two teammates'
	// borg init --remote of an empty remote at once).
	Joined bool `json:"joined,omitempty"`
	// Pushed counts the commits the remote received from this node.
	Pushed int `json:"pushed"`
	// Attempts is how many fetch-merge-push rounds it took.
	Attempts int `json:"attempts"`
	// Conflicts are the lessons both sides edited, each kept twice.
	Conflicts []SyncConflict `json:"conflicts"`
	// Restored are this node's own log files that a commit brought in had
	// rewritten or deleted (a teammate's hand edit, a bad merge): the
	// lines this node had committed and the remote's version lacked were
	// appended back and committed.
	Restored []RestoredLog `json:"restored_log,omitempty"`
	// Rewrite is set when the store was moved onto a rewritten remote
	// branch (SyncOptions.AcceptRewrite).
	Rewrite *SyncRewrite `json:"rewrite,omitempty"`
}

// SyncRewrite is a move of the store onto its remote's rewritten branch.
type SyncRewrite struct {
	// From is the remote's commit this store last synced, which the
	// rewritten branch no longer holds; To the rewritten branch.
	From string `json:"from"`
	To   string `json:"to"`
	// Kept are the paths this node changed since the last sync, committed
	// again on top of the rewritten branch.
	Kept []string `json:"kept"`
}

// RestoredLog is one of this node's log files a commit from the remote
// took lines out of, and sync put back.
type RestoredLog struct {
	Path string `json:"path"`
	// Lines counts the lines put back.
	Lines int `json:"lines"`
	// Commits are the commits brought in that changed the file other than
	// by appending (the remote's side of the merge), newest first.
	Commits []string `json:"commits,omitempty"`
}

// SyncConflict is one lesson edited differently on this node and on the
// remote. The remote's version keeps the id (teammates already have it, and
// the log's evidence stays with it); this node's version becomes a new
// lesson beside it, with a link to the original, so both stay in the store
// and a reviewer (or the next sleep's merge) chooses. Nothing is lost, and
// no file is left with conflict markers an agent would be fed.
type SyncConflict struct {
	Path string `json:"path"`
	// Kept says which side kept Path: "theirs" (both edited it), "ours"
	// or "theirs" (one side deleted it, the edit is kept).
	Kept string `json:"kept"`
	// Copy is the path of this node's version as a new lesson ("" when
	// one side had deleted the lesson).
	Copy string `json:"copy,omitempty"`
	// MovedTo is where the side that deleted the lesson put a file of the
	// same name (archive/<bb>/<id>.html: it archived the lesson), which
	// keeps that side's version; "" for a plain deletion.
	MovedTo string `json:"moved_to,omitempty"`
}

// Sync brings the store and its remote to the same history: it fetches,
// commits this node's new log lines, merges the remote's branch into the
// store's (a fast-forward when it can) and pushes, trying again from the
// fetch when the remote moved meanwhile. Log files never conflict (one per
// node; a reader unions them and trusts no order); a lesson both sides
// edited is kept twice (SyncConflict). Syncs of one store run one at a
// time. When the remote cannot be reached the error wraps ErrUnreachable
// and the store is as it was.
func (s *Store) Sync(ctx context.Context, o SyncOptions) (SyncResult, error) {
	if o.Remote == "" {
		o.Remote = "origin"
	}
	if o.Attempts <= 0 {
		o.Attempts = 5
	}
	res := SyncResult{Remote: o.Remote, Conflicts: []SyncConflict{}}
	if err := s.checkOwner(); err != nil {
		return res, fmt.Errorf("sync: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(s.dir, localLogDir), 0o755); err != nil {
		if r := writeRefusal(s.dir, "sync", err); r != nil {
			return res, r
		}
		return res, err
	}
	wait := o.Wait
	if wait == 0 {
		wait = -1
	} else if wait < 0 {
		wait = 0
	}
	if d, ok := ctx.Deadline(); ok && wait < 0 {
		// Waiting for another sync counts against this one's time.
		wait = max(time.Until(d), 0)
	}
	unlock, err := LockPath(filepath.Join(s.dir, localLogDir, "sync.lock"), wait)
	if r := writeRefusal(s.dir, "sync", err); r != nil {
		return res, r
	}
	if err != nil && errors.Is(err, ErrLocked) {
		return res, fmt.Errorf("sync: another sync of this store is running: %w", err)
	}
	if err != nil {
		return res, fmt.Errorf("sync: take the sync lock: %w", err)
	}
	defer unlock()

	if _, err := s.runGit(ctx, nil, "remote", "get-url", o.Remote); err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("sync: gave up before reaching %q: %w", o.Remote, ctx.Err())
		}
		// The outcome log is committed all the same: a store kept alone
		// holds its history in git too.
		if committed, err := s.commitOwnLog(); err == nil {
			res.Committed = committed
		}
		return res, fmt.Errorf("sync: the store has no remote %q: add one with git -C %s remote add %s URL (or clone the team's store with borg init --remote URL)", o.Remote, s.dir, o.Remote)
	}
	branch, err := s.git.headBranch()
	if err != nil {
		return res, fmt.Errorf("sync: %w", err)
	}
	res.Branch = branch.Short()
	tracking := "refs/remotes/" + o.Remote + "/" + branch.Short()
	for res.Attempts < o.Attempts {
		res.Attempts++
		// What the remote held at the last fetch or push: a branch that no
		// longer descends from it was rewritten.
		prev := s.refID(ctx, tracking)
		if err := s.fetch(ctx, o.Remote, branch.String(), tracking); err != nil {
			return res, err
		}
		if res.Attempts == 1 {
			committed, err := s.commitOwnLog()
			if err != nil {
				return res, fmt.Errorf("sync: commit this node's log: %w", err)
			}
			res.Committed = committed
		}
		if err := s.checkRewrite(ctx, o, branch, tracking, prev, &res); err != nil {
			return res, err
		}
		before, _ := s.git.refHash(branch)
		if err := s.mergeLocked(ctx, branch.String(), tracking, &res); err != nil {
			return res, err
		}
		if err := s.keepOwnLog(ctx, before, o.Remote, &res); err != nil {
			return res, err
		}
		pushed, err := s.push(ctx, o.Remote, branch.String(), tracking)
		if errors.Is(err, errRemoteMoved) && res.Attempts < o.Attempts {
			// Let the other push finish: a short, growing pause.
			select {
			case <-ctx.Done():
				return res, ctx.Err()
			case <-time.After(time.Duration(res.Attempts*res.Attempts) * 50 * time.Millisecond):
			}
			continue
		}
		if errors.Is(err, errRemoteMoved) {
			break
		}
		if err != nil {
			return res, err
		}
		res.Pushed = pushed
		return res, nil
	}
	return res, fmt.Errorf("sync: the remote kept moving during %d attempts; the merge is kept, run borg sync again", o.Attempts)
}

var errRemoteMoved = errors.New("remote moved")

// refID is the commit ref names ("" when it does not exist).
func (s *Store) refID(ctx context.Context, ref string) string {
	out, err := s.runGit(ctx, nil, "rev-parse", "--verify", "-q", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// checkRewrite stops a sync whose fetch found the remote's branch no
// longer descending from prev, the commit the remote-tracking ref named
// before it (what this store last fetched or pushed): a force-push
// rewrote the remote's history. Merging would bring
// every rewritten commit back, and whatever the rewrite took out (a purged
// secret), and the push would undo the rewrite for everyone. The tracking
// ref is put back, so the next sync stops too, until AcceptRewrite moves
// the store onto the rewritten branch (moveOntoRewrite).
//
// A git fetch run by hand in the store moves the tracking ref before sync
// looks (prev is then the rewritten commit already): the ref's reflog,
// which every fetch writes, keeps what it named before, and the newest of
// those this store's branch holds (one it merged: after an accepted
// rewrite the branch holds the old ones no more) is compared instead.
func (s *Store) checkRewrite(ctx context.Context, o SyncOptions, branch plumbing.ReferenceName, tracking, prev string, res *SyncResult) error {
	if prev == "" {
		return nil // never synced: nothing to compare
	}
	cur := s.refID(ctx, tracking)
	if cur == "" {
		// No branch there (a new remote, or one emptied): the push
		// publishes the store, as to any empty remote.
		return nil
	}
	if cur == prev {
		prev = s.lastMerged(ctx, tracking, cur, branch.String())
		if prev == "" || gitIsAncestor(ctx, s.dir, prev, cur) {
			return nil
		}
	} else if gitIsAncestor(ctx, s.dir, prev, cur) {
		return nil
	}
	name := o.Remote + "/" + branch.Short()
	if !o.AcceptRewrite {
		_, _ = s.runGit(ctx, nil, "update-ref", tracking, prev, cur)
		return fmt.Errorf("sync: %w: %s was force-pushed and no longer holds %.12s, the commit this store last synced with it (it is now %.12s); nothing was merged or pushed (a merge would bring back every rewritten commit, and whatever the rewrite took out, a purged secret say). If the rewrite was meant, run borg sync --accept-rewrite: it moves this store onto the rewritten %s and commits on top the lessons and log lines this machine has not synced yet; if not, ask whoever force-pushed (this store's %s still holds the old history)",
			ErrRemoteRewritten, name, prev, cur, name, branch.Short())
	}
	return s.moveOntoRewrite(ctx, name, prev, cur, res)
}

// lastMerged is the newest commit the remote-tracking ref named before it
// named cur that this store's branch holds (one this store merged), read
// from the ref's reflog, which every fetch writes; "" when the reflog holds
// none. A commit fetched by hand and never merged is passed over: what the
// remote dropped of it this store never had.
func (s *Store) lastMerged(ctx context.Context, tracking, cur, branch string) string {
	out, err := s.runGit(ctx, nil, "reflog", "show", "--format=%H", "-n", "64", tracking, "--")
	if err != nil {
		return ""
	}
	seen := map[string]bool{cur: true}
	for _, h := range strings.Fields(string(out)) {
		if seen[h] {
			continue
		}
		seen[h] = true
		if gitIsAncestor(ctx, s.dir, h, branch) {
			return h
		}
		if len(seen) > 16 {
			break // a long run of commits fetched and never merged: give up, as before any fetch by hand
		}
	}
	return ""
}

// moveOntoRewrite moves the store's branch onto cur, the remote's rewritten
// branch, keeping what this node changed since prev, the remote's commit it
// last synced: each such path as HEAD has it (a lesson learned, edited or
// archived here), and each line of this node's own log that prev lacked,
// appended to the file as cur has it. The move is git's reset --keep,
// which refuses rather than lose an uncommitted change; what was kept is
// committed on top, and the old branch stays in the reflog (ORIG_HEAD).
func (s *Store) moveOntoRewrite(ctx context.Context, name, prev, cur string, res *SyncResult) error {
	unlock, err := s.lockWrites()
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	defer unlock()
	head := s.headCommit()
	base := prev
	if out, err := s.runGit(ctx, nil, "merge-base", prev, head); err == nil {
		base = strings.TrimSpace(string(out))
	}
	out, err := s.runGit(ctx, nil, "diff", "--name-only", "--no-renames", "-z", base, head, "--")
	if err != nil {
		return fmt.Errorf("sync: list this node's changes since %.12s: %w", base, err)
	}
	paths := nulPaths(out)
	kept := map[string][]byte{}
	deleted := map[string]bool{}
	ownLines := map[string][][]byte{}
	for _, p := range paths {
		data, err := s.ReadFileAt(head, p)
		if errors.Is(err, ErrNotFound) {
			deleted[p] = true
			continue
		}
		if err != nil {
			return fmt.Errorf("sync: %w", err)
		}
		if s.IsOwnLog(p) {
			// Only the lines not synced yet: those the rewrite took out
			// of lines already shared stay out.
			old, _ := s.ReadFileAt(base, p)
			ownLines[p] = linesMissing(data, old)
			continue
		}
		kept[p] = data
	}
	if _, err := s.runGit(ctx, nil, "reset", "-q", "--keep", cur); err != nil {
		return fmt.Errorf("sync: move onto the rewritten %s: %w (nothing was changed: commit or set aside the files git names, and run borg sync --accept-rewrite again)", name, err)
	}
	res.Rewrite = &SyncRewrite{From: prev, To: cur, Kept: paths}
	if len(paths) == 0 {
		return nil
	}
	var msg strings.Builder
	fmt.Fprintf(&msg, "borg sync: keep this node's changes on the rewritten %s\n\n", name)
	fmt.Fprintf(&msg, "%s was force-pushed (it no longer holds %.12s); what this node changed\nsince it last synced is committed again on top of it:\n", name, prev)
	for _, p := range paths {
		fmt.Fprintf(&msg, "- %s\n", p)
	}
	_, err = s.updateLocked(msg.String(), paths, func() error {
		for _, p := range paths {
			full := filepath.Join(s.dir, filepath.FromSlash(p))
			if lines, ok := ownLines[p]; ok {
				now, _ := os.ReadFile(full)
				if missing := linesMissing(bytes.Join(lines, nil), now); len(missing) > 0 {
					if err := appendLines(full, missing); err != nil {
						return err
					}
				}
				continue
			}
			if deleted[p] {
				if err := os.Remove(full); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
				continue
			}
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return err
			}
			if err := writeAtomic(s, full, kept[p]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sync: moved onto the rewritten %s, but could not commit this node's changes on it: %w (the old branch is ORIG_HEAD)", name, err)
	}
	return nil
}

// fetch updates the remote-tracking ref of branch. A remote without the
// branch (a new, empty remote) leaves tracking absent.
func (s *Store) fetch(ctx context.Context, remote, branch, tracking string) error {
	out, err := s.runGit(ctx, nil, "ls-remote", "--heads", remote, branch)
	if err != nil {
		return fmt.Errorf("sync: %w: %v; nothing was changed", ErrUnreachable, err)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		_, _ = s.runGit(ctx, nil, "update-ref", "-d", tracking)
		return nil
	}
	if _, err := s.runGit(ctx, nil, "fetch", "--quiet", "--no-tags", remote, "+"+branch+":"+tracking); err != nil {
		// The remote answered (ls-remote did): a failure to store what
		// it sent is this machine's, and says so.
		if r := writeRefusal(s.dir, "sync: fetch "+remote, err); r != nil {
			return r
		}
		return fmt.Errorf("sync: %w: %v; nothing was changed", ErrUnreachable, err)
	}
	return nil
}

// commitOwnLog commits the lines this node appended to its log since its
// last commit (none when outcomes are not shared).
func (s *Store) commitOwnLog() (bool, error) {
	if !s.ShareOutcomes() {
		return false, nil
	}
	paths, err := s.OwnLogPaths()
	if err != nil || len(paths) == 0 {
		return false, err
	}
	branch, err := s.git.headBranch()
	if err != nil {
		return false, err
	}
	before, _ := s.git.refHash(branch)
	node, _, _ := LogNode(paths[0])
	h, err := s.Commit("borg sync: outcomes of "+node, paths...)
	if err != nil {
		return false, err
	}
	return h != before.String(), nil
}

// keepOwnLog puts back the lines of this node's own log files that a merge
// took out. Each log file is one node's own and only grows: only this
// node appends to its file, so a commit from the remote that deleted it,
// or rewrote it without lines it held (a teammate's hand edit, a bad
// merge), would erase this node's events on every machine. before is the
// branch before the merge: every line of this node's files as it held them
// that the file now lacks is appended back to it, as this node wrote it,
// and committed. Appending keeps the file one that only grows from here
// on, and readers take the union of lines in any order.
func (s *Store) keepOwnLog(ctx context.Context, before plumbing.Hash, remote string, res *SyncResult) error {
	if before.IsZero() || !s.ShareOutcomes() || s.headCommit() == before.String() {
		return nil
	}
	// Only the files the merge changed: one git diff when it changed none.
	out, err := s.runGit(ctx, nil, "diff", "--name-only", "--no-renames", "-z", before.String(), "HEAD", "--", LogDir+"/")
	if err != nil {
		return fmt.Errorf("sync: list the log files the merge changed: %w", err)
	}
	var restored []RestoredLog
	missing := map[string][][]byte{}
	for _, p := range nulPaths(out) {
		if !s.IsOwnLog(p) {
			continue
		}
		had, err := s.ReadFileAt(before.String(), p)
		if errors.Is(err, ErrNotFound) {
			continue // new here: nothing of it to lose
		}
		if err != nil {
			return fmt.Errorf("sync: %w", err)
		}
		now, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sync: read %s: %w", p, err)
		}
		lost := linesMissing(had, now)
		if len(lost) == 0 {
			continue
		}
		missing[p] = lost
		r := RestoredLog{Path: p, Lines: len(lost)}
		if out, err := s.runGit(ctx, nil, "log", "--no-merges", "--format=%H", before.String()+"..HEAD", "--", p); err == nil {
			r.Commits = strings.Fields(string(out))
		}
		restored = append(restored, r)
	}
	if len(restored) == 0 {
		return nil
	}
	paths := slices.Sorted(maps.Keys(missing))
	var msg strings.Builder
	fmt.Fprintf(&msg, "borg sync: restore this node's log lines that %s's history took out\n\n", remote)
	msg.WriteString("A log file is one machine's own and only grows; these lines of this node's\nlog were missing from the version the merge brought in, and are appended back:\n")
	for _, r := range restored {
		fmt.Fprintf(&msg, "- %s: %d line(s)", r.Path, r.Lines)
		if len(r.Commits) > 0 {
			fmt.Fprintf(&msg, " (changed by %s)", strings.Join(shortIDs(r.Commits), ", "))
		}
		msg.WriteString("\n")
	}
	if _, err := s.Update(msg.String(), paths, func() error {
		for _, p := range paths {
			if err := appendLines(filepath.Join(s.dir, filepath.FromSlash(p)), missing[p]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("sync: restore this node's log lines (%s): %w", strings.Join(paths, ", "), err)
	}
	res.Restored = append(res.Restored, restored...)
	return nil
}

// linesMissing is each non-blank line of had (with its newline) that now
// lacks, each once, in had's order.
func linesMissing(had, now []byte) [][]byte {
	present := map[lineKey]bool{}
	for line := range bytes.Lines(now) {
		present[keyOfLine(line)] = true
	}
	var out [][]byte
	for line := range bytes.Lines(had) {
		k := keyOfLine(line)
		if present[k] || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		present[k] = true
		out = append(out, append(slices.Clip(bytes.TrimRight(line, "\n")), '\n'))
	}
	return out
}

// shortIDs is each commit id shortened to 12 digits.
func shortIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, h := range ids {
		out[i] = h[:min(12, len(h))]
	}
	return out
}

// mergeLocked runs mergeRemote under the store's write lock, with a journal
// that lets the next writer undo a merge this process was killed in.
func (s *Store) mergeLocked(ctx context.Context, ref, tracking string, res *SyncResult) error {
	unlock, err := s.lockWrites()
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	defer unlock()
	// Once begun, a merge is finished or undone whatever the caller's
	// deadline: git killed mid-checkout would leave the worktree half
	// merged and an index.lock no journal explains.
	ctx = context.WithoutCancel(ctx)
	if err := s.mergeAttributes(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	end, err := s.beginMerge(ctx, ref, tracking, "borg sync: merge "+tracking)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	err = s.mergeRemote(ctx, tracking, res)
	// A failed merge was undone by mergeRemote; one left in git's merge
	// state (the abort failed too) keeps its journal for the next writer.
	_, pending := os.Stat(filepath.Join(s.git.gitDir, "MERGE_HEAD"))
	if endErr := end(pending == nil); err == nil {
		err = endErr
	}
	return err
}

// mergeAttributes writes the store's .git/info/attributes (see
// StoreAttributes) before git checks files out in a merge.
func (s *Store) mergeAttributes() error { return writeStoreAttributes(s.git.commonDir) }

// StoreAttributes is borg's block of the store's .git/info/attributes,
// which no push can change and which wins over every .gitattributes in
// the tree. Every file is checked out as git stores it: no filter (a
// filter runs a program), no working-tree encoding, no ident expansion, no
// line-ending conversion, no textconv or merge driver a committed
// .gitattributes names. The outcome logs merge as a union of lines, and a
// lesson both sides changed is handed to borg's resolution whole (binary to
// git's merge), never merged line by line into one file.
const StoreAttributes = "# borg: files are read as git stores them (a committed .gitattributes cannot change that)\n" +
	"* -filter -working-tree-encoding -ident -text !diff !merge\n" +
	LogDir + "/*.jsonl merge=union\n" +
	// "/**/" matches any depth, none included: the buckets and the flat
	// layout both.
	LessonsDir + "/**/*.html -merge\n" +
	ArchiveDir + "/**/*.html -merge\n"

// writeStoreAttributes makes StoreAttributes the end of gitDir's
// info/attributes: lines of the file that are not borg's are kept before
// it, borg's own lines of an older block are dropped, and an up-to-date
// file is not rewritten.
func writeStoreAttributes(gitDir string) error {
	p := filepath.Join(gitDir, "info", "attributes")
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if strings.HasSuffix(string(old), StoreAttributes) {
		return nil
	}
	ours := map[string]bool{}
	for _, l := range strings.Split(StoreAttributes, "\n") {
		ours[l] = true
	}
	var kept strings.Builder
	for _, l := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
		if l != "" && !ours[l] {
			kept.WriteString(l + "\n")
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return WriteFileAtomic(p, []byte(kept.String()+StoreAttributes), 0o644)
}

// beginMerge records, for the next writer should this process die, that
// it merges from (a ref) into ref, with the paths the merge brings in: those
// from changed since the merge base, never this node's own log (whose new
// lines only it appends). The caller holds the write lock and calls end
// when the merge is done or undone (keep leaves the journal for recovery).
func (s *Store) beginMerge(ctx context.Context, ref, from, msg string) (end func(keep bool) error, err error) {
	j := journal{PID: os.Getpid(), StartMS: time.Now().UnixMilli(), Message: msg, Ref: ref, Merge: true, From: from}
	out, err := s.runGit(ctx, nil, "diff", "--name-only", "-z", "--no-renames", "HEAD..."+from, "--")
	if err != nil {
		// No merge base (a join of two histories): what differs.
		out, err = s.runGit(ctx, nil, "diff", "--name-only", "-z", "--no-renames", "HEAD", from, "--")
	}
	if err == nil {
		for _, p := range strings.Split(string(out), "\x00") {
			if p != "" && !s.IsOwnLog(p) {
				j.Undo = append(j.Undo, p)
			}
		}
	}
	if err := s.writeJournal(j); err != nil {
		return nil, err
	}
	return func(keep bool) error {
		if keep {
			return nil
		}
		return s.removeJournal()
	}, nil
}

// BeginMerge is beginMerge for a caller outside memfs that runs git's merge
// under LockWrites (sleep --apply).
func (s *Store) BeginMerge(ctx context.Context, from, msg string) (end func(keep bool) error, err error) {
	if err := s.mergeAttributes(); err != nil {
		return nil, err
	}
	branch, err := s.git.headBranch()
	if err != nil {
		return nil, err
	}
	return s.beginMerge(ctx, branch.String(), from, msg)
}

// mergeRemote merges the remote-tracking ref into the store's branch: a
// fast-forward when this node has nothing the remote lacks, else a merge
// commit whose lesson conflicts are resolved as SyncConflict says.
func (s *Store) mergeRemote(ctx context.Context, tracking string, res *SyncResult) error {
	if _, err := s.runGit(ctx, nil, "rev-parse", "--verify", "-q", tracking); err != nil {
		return nil // the remote has no history yet
	}
	count := func(rng string) int {
		out, err := s.runGit(ctx, nil, "rev-list", "--count", rng)
		if err != nil {
			return 0
		}
		var n int
		_, _ = fmt.Sscan(string(out), &n)
		return n
	}
	incoming := count("HEAD.." + tracking)
	if incoming == 0 {
		return nil
	}
	res.Received += incoming
	if count(tracking+"..HEAD") == 0 {
		if _, err := s.runGit(ctx, nil, "merge", "--ff-only", "-q", tracking); err != nil {
			return fmt.Errorf("sync: fast-forward to %s: %w", tracking, err)
		}
		return nil
	}
	msg := "borg sync: merge " + strings.TrimPrefix(tracking, "refs/remotes/")
	// The merge is committed by borg, once what git left is settled.
	args := []string{"merge", "--no-ff", "--no-commit", "-q", "-Xno-renames"}
	var kept []deletedEdit
	if out, err := s.runGit(ctx, nil, "merge-base", "HEAD", tracking); err == nil {
		kept = s.deletedEdits(ctx, strings.TrimSpace(string(out)), tracking)
	} else {
		if !s.joinableRoots(ctx, tracking) {
			return unrelatedStore(tracking)
		}
		// Two stores begun apart, each by borg init with the same files:
		// their lessons and logs are apart too, and the merge is a union.
		args = append(args, "--allow-unrelated-histories")
		msg = "borg sync: join " + strings.TrimPrefix(tracking, "refs/remotes/") + " (both stores began as borg init)"
		res.Joined = true
	}
	if _, err := s.runGit(ctx, nil, append(args, tracking)...); err != nil {
		conflicted, lerr := s.unmerged(ctx)
		if lerr != nil || len(conflicted) == 0 {
			_, _ = s.runGit(ctx, nil, "merge", "--abort")
			if ge, ok := errors.AsType[*GitError](err); ok && strings.Contains(ge.Stderr, "unrelated histories") {
				return unrelatedStore(tracking)
			}
			return fmt.Errorf("sync: merge %s: %w (the merge was undone; nothing is lost)", tracking, err)
		}
	}
	var resolved []SyncConflict
	for _, d := range kept {
		c, err := s.keepEdit(ctx, d, tracking)
		if err != nil {
			_, _ = s.runGit(ctx, nil, "merge", "--abort")
			return fmt.Errorf("sync: %w: %s: %v; the merge was undone: resolve it by hand (git -C %s merge %s)", ErrSyncConflict, d.path, err, s.dir, tracking)
		}
		resolved = append(resolved, c)
	}
	conflicted, err := s.unmerged(ctx)
	if err != nil {
		_, _ = s.runGit(ctx, nil, "merge", "--abort")
		return fmt.Errorf("sync: merge %s: %w (the merge was undone; nothing is lost)", tracking, err)
	}
	for _, p := range conflicted {
		c, rerr := s.resolve(ctx, p)
		if rerr != nil {
			_, _ = s.runGit(ctx, nil, "merge", "--abort")
			return fmt.Errorf("sync: %w: %s: %v; the merge was undone: resolve it by hand (git -C %s merge %s)", ErrSyncConflict, p, rerr, s.dir, tracking)
		}
		if c != nil {
			resolved = append(resolved, *c)
		}
	}
	var b strings.Builder
	b.WriteString(msg + "\n")
	if len(resolved) > 0 {
		b.WriteString("\nLessons edited on both sides, each kept twice (the remote's keeps the id),\nor deleted on one side and edited on the other, the edit kept:\n")
		for _, c := range resolved {
			switch {
			case c.Copy != "":
				fmt.Fprintf(&b, "- %s: this node's version is now %s\n", c.Path, c.Copy)
			case c.MovedTo != "":
				fmt.Fprintf(&b, "- %s: moved to %s on one side, edited on the other: the edit (%s) is kept, and the lesson stays\n", c.Path, c.MovedTo, c.Kept)
			default:
				fmt.Fprintf(&b, "- %s: deleted on one side, edited on the other: the edit (%s) is kept\n", c.Path, c.Kept)
			}
		}
	}
	if _, err := s.runGit(ctx, strings.NewReader(b.String()), "commit", "-q", "--no-verify", "-F", "-"); err != nil {
		_, _ = s.runGit(ctx, nil, "merge", "--abort")
		return fmt.Errorf("sync: commit the merge: %w (the merge was undone)", err)
	}
	res.Merged = true
	res.Conflicts = append(res.Conflicts, resolved...)
	return nil
}

// unrelatedStore is the error of a sync whose remote holds a store with a
// history that shares no commit with this one's and did not begin as a
// borg init of the same files: the team's, most likely, and this store
// was made on its own.
func unrelatedStore(tracking string) error {
	return fmt.Errorf("sync: %s holds a store with another history than this one, begun otherwise than by a borg init like this one's (nothing was merged; nothing is lost): to join it, clone it with borg init --store NEWDIR --remote URL, and learn this store's lessons there again (borg list shows them)", tracking)
}

// joinableRoots reports whether every root commit of HEAD's history and of
// tracking's is a borg init commit of one same tree: two stores begun
// apart by borg init (two teammates' borg init --remote of an empty remote
// at once, or a store made alone whose remote then got the team's), which
// share nothing but those files, so that a merge of the two histories is a
// union of their lessons and logs.
func (s *Store) joinableRoots(ctx context.Context, tracking string) bool {
	out, err := s.runGit(ctx, nil, "rev-list", "--max-parents=0", "HEAD", tracking, "--")
	if err != nil {
		return false
	}
	roots := strings.Fields(string(out))
	if len(roots) < 2 {
		return false
	}
	tree := ""
	for _, r := range roots {
		line, err := s.runGit(ctx, nil, "log", "-1", "--format=%T %s", r, "--")
		if err != nil {
			return false
		}
		t, subject, _ := strings.Cut(strings.TrimSpace(string(line)), " ")
		if subject != initMessage || tree != "" && t != tree {
			return false
		}
		tree = t
	}
	return true
}

// deletedEdit is a lesson file one side of a merge deleted (or moved: to
// archive/, say) and the other edited.
type deletedEdit struct {
	path string
	// editor is the side that edited it: "ours" or "theirs".
	editor string
	// added are the lesson files the deleting side added, where git's
	// rename detection may have carried the edit.
	added []string
}

// deletedEdits lists the lesson files (lessons/ and archive/) one side
// deleted since base and the other changed (tracking is theirs, HEAD
// ours). git is told not to detect renames (-Xno-renames), so that such a
// file is a modify/delete conflict, but the ort strategy of git 2.39 and
// later ignores it (and merge.renames=false): a lesson moved to archive/ on
// one side and edited on the other merges cleanly as the archived file with
// the edit, and the edited lesson is no longer live. keepEdit settles each
// whatever git did.
func (s *Store) deletedEdits(ctx context.Context, base, tracking string) []deletedEdit {
	changes := func(to string) map[string]byte {
		out, err := s.runGit(ctx, nil, "diff", "--name-status", "--no-renames", "-z", base, to, "--", LessonsDir, ArchiveDir)
		if err != nil {
			return nil
		}
		m := map[string]byte{}
		f := strings.Split(string(out), "\x00")
		for i := 0; i+1 < len(f); i += 2 {
			if f[i] != "" && strings.HasSuffix(f[i+1], ".html") {
				m[f[i+1]] = f[i][0]
			}
		}
		return m
	}
	ours, theirs := changes("HEAD"), changes(tracking)
	addedBy := func(side map[string]byte) []string {
		var out []string
		for p, st := range side {
			if st == 'A' && theirs[p] != ours[p] {
				out = append(out, p)
			}
		}
		sort.Strings(out)
		return out
	}
	var out []deletedEdit
	for _, p := range slices.Sorted(maps.Keys(ours)) {
		switch o, t := ours[p], theirs[p]; {
		case o == 'D' && t == 'M':
			out = append(out, deletedEdit{path: p, editor: "theirs", added: addedBy(ours)})
		case o == 'M' && t == 'D':
			out = append(out, deletedEdit{path: p, editor: "ours", added: addedBy(theirs)})
		}
	}
	return out
}

// keepEdit settles a lesson deleted on one side and edited on the other,
// as the merge left it: the edited version stays live at its path (the
// edit is kept, as for any other lesson the merge would lose), and each
// file the deleting side added holds that side's version (git's rename
// detection may have carried the edit there: the archived copy of a
// lesson is as it was archived).
func (s *Store) keepEdit(ctx context.Context, d deletedEdit, tracking string) (SyncConflict, error) {
	c := SyncConflict{Path: d.path, Kept: d.editor}
	editor, deleter := "HEAD", tracking
	if d.editor == "theirs" {
		editor, deleter = tracking, "HEAD"
	}
	put := func(rev, p string) error {
		data, err := s.runGit(ctx, nil, "cat-file", "blob", rev+":"+p)
		if err != nil {
			return err
		}
		full := filepath.Join(s.dir, filepath.FromSlash(p))
		if err := s.makeBucket(filepath.Dir(full)); err != nil {
			return err
		}
		if err := WriteFileAtomic(full, data, 0o644); err != nil {
			return err
		}
		_, err = s.runGit(ctx, nil, "add", "--", p)
		return err
	}
	if err := put(editor, d.path); err != nil {
		return c, err
	}
	for _, p := range d.added {
		want, err := s.runGit(ctx, nil, "rev-parse", deleter+":"+p)
		if err != nil {
			return c, err
		}
		staged, err := s.runGit(ctx, nil, "ls-files", "-s", "--", p)
		if err != nil {
			return c, err
		}
		if f := strings.Fields(string(staged)); len(f) < 3 || f[1] != strings.TrimSpace(string(want)) || f[2] != "0" || strings.Count(string(staged), "\n") > 1 {
			if err := put(deleter, p); err != nil {
				return c, err
			}
		}
		if path.Base(p) == path.Base(d.path) {
			c.MovedTo = p
		}
	}
	return c, nil
}

// unmerged lists the paths a merge left in conflict, sorted.
func (s *Store) unmerged(ctx context.Context) ([]string, error) {
	out, err := s.runGit(ctx, nil, "diff", "--name-only", "--diff-filter=U", "-z")
	if err != nil {
		return nil, err
	}
	return nulPaths(out), nil
}

// nulPaths is the paths of git's -z output of names, sorted.
func nulPaths(out []byte) []string {
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	return paths
}

// stageBlob reads one stage of a conflicted path (2: ours, 3: theirs); ok is
// false when that side has no such file.
func (s *Store) stageBlob(ctx context.Context, stage int, p string) ([]byte, bool) {
	out, err := s.runGit(ctx, nil, "cat-file", "blob", fmt.Sprintf(":%d:%s", stage, p))
	if err != nil {
		return nil, false
	}
	return out, true
}

// mergeLessonEdits is one lesson holding both sides' edits of it, when
// each side changed other parts of it (a sleep's confidence line here, a
// person's new paragraph there). First git's line merge of the merge
// base's, this node's and the remote's versions (git merge-file; lessons
// are -merge in .gitattributes, so git merges none itself), which keeps
// each side's text as written: taken when it is clean, reads as a lesson
// of the path's id, and takes each field whole from one side. Otherwise
// the three versions are merged field by field (mergeFields) and the
// result written as borg writes a lesson. A field both sides changed
// differently is a conflict either way: the lesson is kept twice.
func (s *Store) mergeLessonEdits(ctx context.Context, p string, ours, theirs []byte) ([]byte, bool) {
	base, ok := s.stageBlob(ctx, 1, p)
	if !ok {
		return nil, false
	}
	_, id, _, ok := ParseLessonPath(p)
	if !ok {
		return nil, false
	}
	lo, oerr := Parse(ours)
	lt, terr := Parse(theirs)
	lb, berr := Parse(base)
	if oerr != nil || terr != nil || berr != nil {
		return nil, false
	}
	if out, ok := s.lineMerge(ctx, ours, base, theirs); ok {
		if merged, err := Parse(out); err == nil && merged.ID == id && fieldsFromOneSide(merged, lo, lt) {
			return out, true
		}
	}
	merged, ok := mergeFields(lb, lo, lt)
	if !ok || merged.ID != id || Validate(merged) != nil {
		return nil, false
	}
	return Render(merged), true
}

// lineMerge is git merge-file's merge of ours and theirs from base; ok is
// false when lines conflict (git's exit status counts them) or git fails.
func (s *Store) lineMerge(ctx context.Context, ours, base, theirs []byte) ([]byte, bool) {
	dir := filepath.Join(s.dir, filepath.FromSlash(tmpDir))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false
	}
	var names []string
	defer func() {
		for _, n := range names {
			_ = os.Remove(n)
		}
	}()
	for _, data := range [][]byte{ours, base, theirs} {
		f, err := os.CreateTemp(dir, "merge-*.html")
		if err != nil {
			return nil, false
		}
		names = append(names, f.Name())
		_, werr := f.Write(data)
		if cerr := f.Close(); werr != nil || cerr != nil {
			return nil, false
		}
	}
	out, err := s.runGit(ctx, nil, "merge-file", "-p", "-q", names[0], names[1], names[2])
	if err != nil {
		return nil, false
	}
	return out, true
}

// fieldsFromOneSide reports whether each field of merged is ours' or
// theirs' whole.
func fieldsFromOneSide(merged, ours, theirs domain.Lesson) bool {
	fields := func(l domain.Lesson) []string {
		return []string{l.Title, l.Gist, l.Body, l.Type, l.Reach, l.Author,
			strconv.FormatFloat(l.Confidence, 'f', -1, 64), strconv.Itoa(l.Importance), strconv.Itoa(l.Reprieves),
			l.Created.String(), l.ValidUntil.String(), strings.Join(l.Tags, "\x00"), strings.Join(l.Anchors, "\x00"), fmt.Sprint(l.Links)}
	}
	m, o, t := fields(merged), fields(ours), fields(theirs)
	for i := range m {
		if m[i] != o[i] && m[i] != t[i] {
			return false
		}
	}
	return true
}

// resolve settles one conflicted path, or says why it cannot.
func (s *Store) resolve(ctx context.Context, p string) (*SyncConflict, error) {
	ours, hasOurs := s.stageBlob(ctx, 2, p)
	theirs, hasTheirs := s.stageBlob(ctx, 3, p)
	full := filepath.Join(s.dir, filepath.FromSlash(p))
	switch {
	case strings.HasPrefix(p, LogDir+"/") && strings.HasSuffix(p, ".jsonl"):
		// Never expected (one file per node, merge=union): take the union
		// of the lines, ours first, each line once.
		if err := WriteFileAtomic(full, unionLines(ours, theirs), 0o644); err != nil {
			return nil, err
		}
		_, err := s.runGit(ctx, nil, "add", "--", p)
		return nil, err
	case (strings.HasPrefix(p, LessonsDir+"/") || strings.HasPrefix(p, ArchiveDir+"/")) && strings.HasSuffix(p, ".html"):
	default:
		return nil, errors.New("not a lesson or a log file")
	}
	c := &SyncConflict{Path: p}
	switch {
	case hasOurs && hasTheirs:
		if merged, ok := s.mergeLessonEdits(ctx, p, ours, theirs); ok {
			if err := WriteFileAtomic(full, merged, 0o644); err != nil {
				return nil, err
			}
			_, err := s.runGit(ctx, nil, "add", "--", p)
			return nil, err // one lesson holding both edits: nothing to report
		}
		c.Kept = "theirs"
		l, err := Parse(ours)
		if err != nil {
			return nil, fmt.Errorf("this node's version does not parse: %w", err)
		}
		l.ID = conflictID(l.ID, ours)
		l.Links = append(l.Links, domain.LessonLink{Rel: domain.RelConflictsWith, Target: strings.TrimSuffix(path.Base(p), ".html")})
		// The copy goes to its own bucket (a conflict in the flat layout
		// too: ParseLessonPath's dir is lessons/ or archive/ either way).
		dir, _, _, _ := ParseLessonPath(p)
		if dir == "" {
			dir, _, _ = strings.Cut(p, "/")
		}
		copyPath := dir + "/" + Bucket(l.ID) + "/" + l.ID + ".html"
		copyFull := filepath.Join(s.dir, filepath.FromSlash(copyPath))
		if err := s.makeBucket(filepath.Dir(copyFull)); err != nil {
			return nil, err
		}
		data := Rewrite(ours, l) // this node's edit as written, under its new id
		if err := WriteFileAtomic(copyFull, data, 0o644); err != nil {
			return nil, err
		}
		if err := WriteFileAtomic(full, theirs, 0o644); err != nil {
			return nil, err
		}
		if _, err := s.runGit(ctx, nil, "add", "--", p, copyPath); err != nil {
			return nil, err
		}
		c.Copy = copyPath
	case hasOurs:
		c.Kept = "ours"
		if err := WriteFileAtomic(full, ours, 0o644); err != nil {
			return nil, err
		}
		if _, err := s.runGit(ctx, nil, "add", "--", p); err != nil {
			return nil, err
		}
	case hasTheirs:
		c.Kept = "theirs"
		if err := WriteFileAtomic(full, theirs, 0o644); err != nil {
			return nil, err
		}
		if _, err := s.runGit(ctx, nil, "add", "--", p); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("neither side has the file")
	}
	return c, nil
}

// conflictID is the id of this node's version of a lesson both sides
// edited: the original id (shortened to fit) and four hex of the version's
// content, so the same version always gets the same id.
func conflictID(id string, content []byte) string {
	sum := sha256.Sum256(content)
	suffix := "-v" + hex.EncodeToString(sum[:2])
	if len(id)+len(suffix) > 64 {
		id = strings.TrimRight(id[:64-len(suffix)], "-")
	}
	return id + suffix
}

// unionLines is a's lines then b's lines that a lacks, each once.
func unionLines(a, b []byte) []byte {
	seen := map[string]bool{}
	var out bytes.Buffer
	for _, data := range [][]byte{a, b} {
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			key := string(bytes.TrimRight(line, "\n"))
			if key == "" || seen[key] {
				continue
			}
			seen[key] = true
			out.WriteString(key + "\n")
		}
	}
	return out.Bytes()
}

// push sends the store's branch to the remote. When the remote moved since
// the fetch it returns errRemoteMoved (the caller fetches and merges
// again); pushed is how many commits the remote lacked.
func (s *Store) push(ctx context.Context, remote, branch, tracking string) (int, error) {
	pending := 0
	if _, err := s.runGit(ctx, nil, "rev-parse", "--verify", "-q", tracking); err == nil {
		out, err := s.runGit(ctx, nil, "rev-list", "--count", tracking+"..HEAD")
		if err == nil {
			_, _ = fmt.Sscan(string(out), &pending)
		}
		if pending == 0 {
			return 0, nil
		}
	} else if out, err := s.runGit(ctx, nil, "rev-list", "--count", "HEAD"); err == nil {
		_, _ = fmt.Sscan(string(out), &pending)
	}
	_, err := s.runGit(ctx, nil, "push", remote, "HEAD:"+branch)
	if err != nil {
		var ge *GitError
		// The remote moved (another teammate pushed first), or another
		// push holds its ref's lock right now: fetch, merge, try again.
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "rejected") &&
			(strings.Contains(ge.Stderr, "fetch first") || strings.Contains(ge.Stderr, "non-fast-forward") ||
				strings.Contains(ge.Stderr, "failed to update ref") || strings.Contains(ge.Stderr, "cannot lock ref")) {
			return 0, errRemoteMoved
		}
		if errors.As(err, &ge) && (strings.Contains(ge.Stderr, "rejected") || strings.Contains(ge.Stderr, "declined")) {
			// Reached, and refused (a protected branch, a hook): the
			// next sync would be refused too.
			return 0, fmt.Errorf("sync: push: %s refused it: %v; what was fetched and merged is kept here: ask whoever runs the remote, or share through a pull request", remote, err)
		}
		return 0, fmt.Errorf("sync: push: %w: %v; what was fetched and merged is kept, the next borg sync pushes it", ErrUnreachable, err)
	}
	// The tracking ref now names what the remote has.
	_, _ = s.runGit(ctx, nil, "update-ref", tracking, "HEAD")
	return pending, nil
}

// PushBranch pushes the store's branch to the remote under the same name.
// It never replaces commits the remote's branch holds and this one lacks:
// a sleep branch is reviewed where it is pushed, and a reviewer's fix-up
// or another run of the same night is not borg's to drop.
func (s *Store) PushBranch(ctx context.Context, remote, branch string) error {
	if remote == "" {
		remote = "origin"
	}
	if _, err := s.runGit(ctx, nil, "remote", "get-url", remote); err != nil {
		return fmt.Errorf("push %s: the store has no remote %q: add one with git -C %s remote add %s URL", branch, remote, s.dir, remote)
	}
	name := strings.TrimPrefix(branch, "refs/heads/")
	ref := "refs/heads/" + name
	if _, err := s.runGit(ctx, nil, "push", remote, ref+":"+ref); err != nil {
		if ge, ok := errors.AsType[*GitError](err); ok && strings.Contains(ge.Stderr, "rejected") {
			return fmt.Errorf("push %s: %s's %s holds commits this one lacks (a reviewer's, or another run of this night): nothing was pushed; review that branch, or delete it (git -C %s push %s --delete %s) and push again", name, remote, name, s.dir, remote, name)
		}
		return fmt.Errorf("push %s: %w: %v", branch, ErrUnreachable, err)
	}
	return nil
}
