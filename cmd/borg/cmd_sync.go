package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/memfs"
)

func syncCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "fetch the team's store, merge, and push: one memory across teammates",
		ArgsUsage: " ",
		Description: "Commits this machine's new log lines, fetches the remote, merges (a lesson edited on\n" +
			"both sides is kept twice: the remote's under its id, this machine's as a new lesson\n" +
			"linked to it), and pushes, trying again when the remote moved meanwhile. Credentials\n" +
			"come from your git configuration, as for git itself. Safe from cron or a hook: syncs\n" +
			"of one store run one at a time, and a remote that cannot be reached changes nothing.\n" +
			"A remote whose branch was force-pushed (it no longer holds what this store last synced)\n" +
			"stops the sync, with nothing merged or pushed; --accept-rewrite moves the store onto it.",
		Flags: []cli.Flag{
			storeFlag(), jsonFlag(),
			&cli.StringFlag{Name: "remote", Value: "origin", Usage: "the git `REMOTE` to sync with"},
			&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "give up after this long"},
			&cli.BoolFlag{Name: "no-wait", Usage: "when another sync of this store is running, exit at once instead of waiting"},
			&cli.BoolFlag{Name: "accept-rewrite", Usage: "when the remote's branch was rewritten (force-pushed), move this store onto it, committing on top the lessons and log lines not synced yet"},
			&cli.BoolFlag{Name: "background", Hidden: true, Usage: "started by a hook (BORG_AUTOSYNC): record the outcome, print nothing"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("sync takes no arguments (the remote is --remote NAME)")
			}
			if d := c.Duration("timeout"); d <= 0 {
				return usageErr("--timeout %s: want a positive duration, such as 5m", d)
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
			defer cancel()
			o := memfs.SyncOptions{Remote: c.String("remote"), AcceptRewrite: c.Bool("accept-rewrite")}
			if c.Bool("no-wait") || c.Bool("background") {
				o.Wait = -1
			}
			if c.Bool("background") {
				return runBackgroundSync(ctx, e, s, o)
			}
			return runSync(ctx, e, s, o, c.Bool("json"))
		},
	}
}

func runSync(ctx context.Context, e *env, s *memfs.Store, o memfs.SyncOptions, asJSON bool) error {
	res, err := s.Sync(ctx, o)
	// A lesson edited by hand and not committed is not shared, and a
	// merge that brings the file in stops on it: said either way.
	if edited, _ := s.Edited(ctx); len(edited) > 0 {
		fmt.Fprintf(e.err, "borg: %s edited and not committed, so not shared: borg doctor --fix commits it (when valid), and the next borg sync shares it\n", describeList(edited))
	}
	if err != nil {
		if errors.Is(err, memfs.ErrLocked) {
			return fail(exitFail, "another borg sync of this store is running; it will have synced when it ends")
		}
		return fail(exitFail, "%v", err)
	}
	for _, r := range res.Restored {
		by := ""
		if len(r.Commits) > 0 {
			by = " (" + strings.Join(shortHashes(r.Commits), ", ") + ")"
		}
		fmt.Fprintf(e.err, "borg: %s is this machine's own log, and what sync brought in from %s had %d of its lines taken out%s: sync appended them back and committed them (a log file is its machine's alone and only grows; borg doctor names the commit)\n",
			r.Path, res.Remote, r.Lines, by)
	}
	// Never moved by sync itself: a teammate's borg from before the
	// buckets reads no lesson of a bucketed store.
	if n := s.FlatLessonFiles(); n > 0 {
		fmt.Fprintf(e.err, "borg: %d lesson file(s) are in the flat layout of earlier borg (lessons/<id>.html), which makes every commit cost the size of lessons/: once every teammate runs a borg that reads lessons/<bucket>/, run borg doctor --fix to move them\n", n)
	}
	if asJSON {
		return writeJSON(e, res)
	}
	fmt.Fprintln(e.out, describeSync(res))
	if res.Rewrite != nil && len(res.Rewrite.Kept) > 0 {
		fmt.Fprintf(e.out, "  kept: %s (review them: a change made here to a file the rewrite took out brings it back)\n", describeList(res.Rewrite.Kept))
	}
	for _, c := range res.Conflicts {
		switch {
		case c.Copy != "":
			fmt.Fprintf(e.out, "  conflict: %s was edited here and on %s: theirs keeps the id, yours is now %s (review both and keep one: the next sleep merges them only if they are near-duplicates)\n", c.Path, res.Remote, c.Copy)
		case c.MovedTo != "":
			fmt.Fprintf(e.out, "  conflict: %s was moved to %s on one side and edited on the other: the edit is kept, and the lesson stays live (%s holds it as it was moved; git rm the one you do not want)\n", c.Path, c.MovedTo, c.MovedTo)
		default:
			fmt.Fprintf(e.out, "  conflict: %s was deleted on one side and edited on the other: the edit is kept\n", c.Path)
		}
	}
	return nil
}

// describeList names paths in a line: the first three, and how many more.
func describeList(paths []string) string {
	if len(paths) <= 3 {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:3], ", "), len(paths)-3)
}

// describeSync is sync's one-line summary.
func describeSync(r memfs.SyncResult) string {
	var parts []string
	if r.Rewrite != nil {
		parts = append(parts, fmt.Sprintf("moved onto the rewritten %s/%s (it no longer holds %.12s), keeping %d change(s) made here since the last sync", r.Remote, r.Branch, r.Rewrite.From, len(r.Rewrite.Kept)))
	}
	if r.Committed {
		parts = append(parts, "committed this machine's new outcomes")
	}
	switch {
	case r.Received > 0 && r.Joined:
		parts = append(parts, fmt.Sprintf("joined the store of %s/%s, which began as a borg init of the same files as this one: merged %d commit(s)", r.Remote, r.Branch, r.Received))
	case r.Received > 0 && r.Merged:
		parts = append(parts, fmt.Sprintf("merged %d commit(s) from %s", r.Received, r.Remote))
	case r.Received > 0:
		parts = append(parts, fmt.Sprintf("fast-forwarded %d commit(s) from %s", r.Received, r.Remote))
	}
	if n := restoredLines(r); n > 0 {
		parts = append(parts, fmt.Sprintf("restored %d line(s) of this machine's log that the remote's history took out", n))
	}
	if r.Pushed > 0 {
		parts = append(parts, fmt.Sprintf("pushed %d commit(s) to %s/%s", r.Pushed, r.Remote, r.Branch))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("in sync with %s/%s: nothing to do", r.Remote, r.Branch)
	}
	s := strings.Join(parts, ", ")
	if r.Attempts > 1 {
		s += fmt.Sprintf(" (%d attempts: the remote moved meanwhile)", r.Attempts)
	}
	return s
}

// restoredLines counts the lines of this machine's log a sync put back.
func restoredLines(r memfs.SyncResult) int {
	n := 0
	for _, l := range r.Restored {
		n += l.Lines
	}
	return n
}

// The opt-in background sync: with BORG_AUTOSYNC set to a duration (15m),
// a hook starts a detached `borg sync --background` after it has answered,
// at most once per that duration; the outcome is recorded in
// .borg/local/sync.json for `borg doctor`. A hook never waits for it.

type autosyncStatus struct {
	StartedMS  int64  `json:"started_ms"`
	FinishedMS int64  `json:"finished_ms,omitempty"`
	Result     string `json:"result,omitempty"`
	Failed     bool   `json:"failed,omitempty"`
}

func autosyncPath(s *memfs.Store) string {
	return filepath.Join(s.Dir(), ".borg", "local", "sync.json")
}

func readAutosync(s *memfs.Store) (autosyncStatus, bool) {
	data, err := os.ReadFile(autosyncPath(s))
	if err != nil {
		return autosyncStatus{}, false
	}
	var st autosyncStatus
	return st, json.Unmarshal(data, &st) == nil && st.StartedMS > 0
}

func writeAutosync(s *memfs.Store, st autosyncStatus) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return memfs.WriteFileAtomic(autosyncPath(s), append(data, '\n'), 0o644)
}

// maybeAutosync starts a background sync when BORG_AUTOSYNC asks for one
// and the last one started longer ago than its interval. Errors are
// returned for the hook's stderr line; nothing here blocks.
func maybeAutosync(e *env, s *memfs.Store) error {
	every, err := autosyncEvery(e.getenv)
	if err != nil || every == 0 {
		return err
	}
	now := e.now()
	if st, ok := readAutosync(s); ok && now.Sub(time.UnixMilli(st.StartedMS)) < every {
		return nil
	}
	if err := writeAutosync(s, autosyncStatus{StartedMS: now.UnixMilli()}); err != nil {
		return fmt.Errorf("record background sync: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "sync", "--store", s.Dir(), "--background")
	// Detached, no one can answer a prompt: ssh must not ask either.
	cmd.Env = append(backgroundEnv(os.Environ()), "GIT_SSH_COMMAND="+batchSSH(), "GCM_INTERACTIVE=never", "SSH_ASKPASS_REQUIRE=never")
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start background sync: %w", err)
	}
	return cmd.Process.Release()
}

// autosyncEvery is BORG_AUTOSYNC: how often a hook starts a background
// sync, 0 for never (unset, off or 0), an error for anything else that is
// not a duration of at least a minute.
func autosyncEvery(getenv func(string) string) (time.Duration, error) {
	v := strings.TrimSpace(getenv("BORG_AUTOSYNC"))
	if v == "" || v == "off" || v == "0" {
		return 0, nil
	}
	every, err := time.ParseDuration(v)
	if err != nil || every < time.Minute {
		return 0, fmt.Errorf("BORG_AUTOSYNC=%q: want a duration of at least 1m, such as 15m", v)
	}
	return every, nil
}

// runBackgroundSync is `borg sync --background`: the outcome goes to
// .borg/local/sync.json, nothing to the terminal it has none of.
func runBackgroundSync(ctx context.Context, e *env, s *memfs.Store, o memfs.SyncOptions) error {
	st, _ := readAutosync(s)
	if st.StartedMS == 0 {
		st.StartedMS = e.now().UnixMilli()
	}
	res, err := s.Sync(ctx, o)
	st.FinishedMS = e.now().UnixMilli()
	switch {
	case errors.Is(err, memfs.ErrLocked):
		return nil // the running sync records its own outcome
	case err != nil:
		st.Result, st.Failed = err.Error(), true
	default:
		st.Result = describeSync(res)
	}
	return writeAutosync(s, st)
}

// describeAutosync is doctor's line on the last background sync.
func describeAutosync(st autosyncStatus, now time.Time) string {
	ago := func(ms int64) string { return now.Sub(time.UnixMilli(ms)).Round(time.Second).String() + " ago" }
	switch {
	case st.FinishedMS == 0:
		return "a background sync was started " + ago(st.StartedMS) + " and has not finished"
	case st.Failed:
		return "the last background sync failed " + ago(st.FinishedMS) + ": " + st.Result
	}
	return "the last background sync finished " + ago(st.FinishedMS) + ": " + st.Result
}

// batchSSH is the ssh a background sync runs: the user's GIT_SSH_COMMAND
// (or ssh), never asking for a passphrase or a host key.
func batchSSH() string {
	base := os.Getenv("GIT_SSH_COMMAND")
	if base == "" {
		base = "ssh"
	}
	return base + " -o BatchMode=yes"
}
