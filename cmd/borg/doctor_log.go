package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

// Doctor's check of the shared log's evidence: whether each
// log/<node>.jsonl holds what its committers could honestly have written.
// The readers already count every committed line as its committer's
// (memfs attribution), so a forged file cannot pass for several engineers;
// doctor says which file and which commit to revert.

// clockSlack is how far an event may be dated past the commit that added
// it, or past now, before doctor calls it impossible (clock skew).
const clockSlack = int64(60 * 60 * 1000)

// logFileCheck is doctor's verdict on one machine's shared log: its
// file, or its segments together (File names the first, log/<node>.jsonl).
type logFileCheck struct {
	File string `json:"file"`
	// Segments counts the machine's files (1 for a log that never rolled).
	Segments int `json:"segments"`
	Events   int `json:"events"`
	// Committers are the engineers who committed the file's lines.
	Committers []string `json:"committers"`
	// Claimed are the distinct authors the file's committed events claim.
	Claimed []string `json:"claimed"`
	// Reattributed counts committed events whose claimed author is not
	// who committed them: they count as the committer's.
	Reattributed int `json:"reattributed"`
	// Orphans counts results whose session neither started (no session
	// event) nor asked the lesson anywhere in the log.
	Orphans int `json:"orphan_results"`
	// Misdated counts events dated in the future, after the commit that
	// added them, or before the store existed.
	Misdated int `json:"misdated"`
	// UnderYou counts lines committed under the identity of who runs
	// doctor in a file this machine does not write: their other machine's,
	// or someone pushing as them (git identities are not signed), which
	// early delivery would trust as theirs.
	UnderYou int `json:"under_you,omitempty"`
	// Paced names a committer of the file whose sessions, over the whole
	// log, started faster than any person works (maxSessionsPerMinute),
	// with that pace.
	Paced string `json:"paced,omitempty"`
	// Debut names the other identities whose first log files were added
	// within debutWindow of this file's first commit (three or more
	// identities appearing at once: one pusher under several names).
	Debut []string `json:"debut,omitempty"`
	// Commits are the commits that added the re-attributed events.
	Commits []string `json:"commits,omitempty"`
	// Verdict is "ok", "note" (nothing amiss but identities appearing at
	// once, Debut), "suspect" (re-attributed events and nothing else
	// amiss, as when an engineer's email changed; misdated events; three
	// or more authors, or two or more committers, in one node's file: one
	// machine's log is one engineer's) or "forged" (re-attributed
	// events claiming two or more authors who committed none of the file,
	// or with orphan results or misdated events).
	Verdict string `json:"verdict"`
	Fix     string `json:"fix,omitempty"`
}

// checkLogEvidence checks every shared log file's evidence; me is the
// hashed id of who runs doctor ("" unknown).
func checkLogEvidence(ctx context.Context, s *memfs.Store, nowMS int64, me string) ([]logFileCheck, error) {
	var all []memfs.CommittedLine
	if err := s.CommittedLines(ctx, func(cl memfs.CommittedLine) { all = append(all, cl) }); err != nil {
		return nil, err
	}
	local, _, err := s.ReadEvents() // the local log's sessions and asks count too
	if err != nil {
		return nil, err
	}
	started, asked := map[string]bool{}, map[[2]string]bool{}
	note := func(e domain.Event) {
		switch e.Kind {
		case domain.KindSession:
			started[e.Session] = true
		case domain.KindAsked:
			asked[[2]string{e.Session, e.Lesson}] = true
		}
	}
	for _, cl := range all {
		note(cl.Event)
	}
	for _, e := range local {
		note(e)
	}
	root := s.RootCommitMS()
	byFile := map[string]*logFileCheck{}
	commits := map[string]map[string]bool{}
	added := map[string]map[string]bool{} // every commit that added a line, by file
	segments := map[string]map[string]bool{}
	for _, cl := range all {
		key := machineLog(cl.File)
		c := byFile[key]
		if c == nil {
			c = &logFileCheck{File: key}
			byFile[key] = c
			commits[key] = map[string]bool{}
			segments[key] = map[string]bool{}
		}
		if !segments[key][cl.File] {
			segments[key][cl.File] = true
			c.Segments++
		}
		c.Events++
		e := cl.Event
		if cl.Commit != nil {
			if added[key] == nil {
				added[key] = map[string]bool{}
			}
			added[key][cl.Commit.Hash] = true
			// Lines not committed yet were written on this machine: they
			// are no one's evidence but this engineer's. An event with no
			// author is simply its committer's.
			c.Claimed = addSorted(c.Claimed, e.Author)
			c.Committers = addSorted(c.Committers, cl.Commit.Author)
			if e.Author != "" && e.Author != cl.Commit.Author {
				c.Reattributed++
				commits[key][cl.Commit.Hash] = true
			}
			if me != "" && cl.Commit.Author == me && !s.IsOwnLog(cl.File) {
				c.UnderYou++
				commits[key][cl.Commit.Hash] = true
			}
			if e.MS > cl.Commit.MS+clockSlack {
				c.Misdated++
			}
		}
		if e.MS > nowMS+clockSlack || (root != 0 && e.MS < root-clockSlack) {
			c.Misdated++
		}
		// A veto is a person's word (borg no), needing no session.
		if e.Kind.IsResult() && e.Kind != domain.KindVetoed && !started[e.Session] && !asked[[2]string{e.Session, e.Lesson}] {
			c.Orphans++
		}
	}
	paceOf := inhumanPace(all)
	debuts := debutTogether(all)
	for name, c := range byFile {
		for _, who := range c.Committers {
			if p, ok := paceOf[who]; ok {
				c.Paced = fmt.Sprintf("%s started %d sessions within one minute", who, p)
			}
		}
		c.Debut = debuts[name]
		if c.Paced != "" || len(c.Debut) > 0 {
			// The whole file is in doubt: every commit that added to it.
			maps.Copy(commits[name], added[name])
		}
	}
	out := make([]logFileCheck, 0, len(byFile))
	for _, name := range slices.Sorted(maps.Keys(byFile)) {
		out = append(out, *byFile[name])
	}
	for i := range out {
		out[i].judge(s.Dir(), commits[out[i].File])
	}
	return out, nil
}

// judge gives c its verdict from its counts (commits: the hashes of the
// commits that put its suspect lines there) and, unless it is ok, the
// fix: revert those commits in store.
func (c *logFileCheck) judge(store string, commits map[string]bool) {
	c.Commits = slices.Sorted(maps.Keys(commits))
	foreign := 0 // claimed authors who committed none of the file
	for _, a := range c.Claimed {
		if a != "" && !slices.Contains(c.Committers, a) {
			foreign++
		}
	}
	switch {
	case c.Reattributed > 0 && (foreign >= 2 || c.Orphans > 0 || c.Misdated > 0):
		c.Verdict = "forged"
	case c.Reattributed > 0 || c.Misdated > 0 || len(c.Claimed) >= 3 || len(c.Committers) >= 2 || c.UnderYou > 0 ||
		c.Paced != "":
		c.Verdict = "suspect"
	case len(c.Debut) > 0:
		// Identities appearing at once and nothing else amiss: a team
		// that starts together looks so too. Said, without a fix.
		c.Verdict = "note"
	default:
		c.Verdict = "ok"
	}
	if c.Verdict != "ok" && c.Verdict != "note" && len(c.Commits) > 0 {
		c.Fix = fmt.Sprintf("find out who pushed it; to drop its evidence: git -C %s revert %s, then push",
			store, strings.Join(shortHashes(c.Commits), " "))
	}
}

func addSorted(set []string, v string) []string {
	i, found := slices.BinarySearch(set, v)
	if found {
		return set
	}
	return slices.Insert(set, i, v)
}

func shortHashes(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h[:min(12, len(h))]
	}
	return out
}

// printLogChecks writes the files that are not ok, one paragraph each.
func printLogChecks(w io.Writer, checks []logFileCheck) {
	for _, c := range checks {
		if c.Verdict == "ok" {
			continue
		}
		if c.Verdict == "note" {
			fmt.Fprintf(w, "  %s: note: its first lines came within %d minutes of the first log files of %s; several identities appearing at once is how a team that starts together looks, and how one pusher poses as a team: their evidence counts as one author (SECURITY.md)\n",
				c.File, debutWindow/60000, strings.Join(c.Debut, ", "))
			continue
		}
		name := c.File
		if c.Segments > 1 {
			name = fmt.Sprintf("%s and its %d later segments", c.File, c.Segments-1)
		}
		fmt.Fprintf(w, "  %s: %s: %d of %d events claim an author who did not commit them (committed by %s; claimed %d authors)",
			name, c.Verdict, c.Reattributed, c.Events, strings.Join(c.Committers, ", "), len(c.Claimed))
		if c.Orphans > 0 {
			fmt.Fprintf(w, "; %d results of sessions that never started or asked", c.Orphans)
		}
		if c.Misdated > 0 {
			fmt.Fprintf(w, "; %d events dated in the future, after their commit or before the store", c.Misdated)
		}
		if c.Paced != "" {
			fmt.Fprintf(w, "; %s, faster than anyone works (more than %d a minute)", c.Paced, maxSessionsPerMinute)
		}
		if len(c.Debut) > 0 {
			fmt.Fprintf(w, "; its first lines came within %d minutes of the first log files of %s: several identities appearing at once is how one pusher poses as a team", debutWindow/60000, strings.Join(c.Debut, ", "))
		}
		if c.UnderYou > 0 {
			fmt.Fprintf(w, "; %d lines committed under your identity in a file this machine does not write (your other machine's, or someone pushing as you: early delivery trusts them as yours)", c.UnderYou)
		}
		fmt.Fprintf(w, "; they count as their committer's, one author\n")
		if c.Fix != "" {
			fmt.Fprintf(w, "    %s\n", c.Fix)
		}
	}
}

// printLogRewrites writes each commit that took lines out of a log file,
// one line each, with what puts them back while they are missing.
func printLogRewrites(w io.Writer, store string, rewrites []memfs.LogRewrite) {
	for _, r := range rewrites {
		what := fmt.Sprintf("took %d of its lines out", r.Lines)
		if r.Deleted {
			what = fmt.Sprintf("deleted it, and its %d line(s) with it", r.Lines)
		}
		fmt.Fprintf(w, "  %s: rewritten: commit %s (%s) %s; a log file is its machine's alone and only grows",
			r.File, shortHashes([]string{r.Commit})[0], time.UnixMilli(r.MS).UTC().Format("2006-01-02"), what)
		if r.Restored {
			fmt.Fprintf(w, "; the file holds them again\n")
			continue
		}
		fmt.Fprintf(w, ": unless the commit meant to drop that evidence (a revert of forged lines), its machine's next borg sync appends back the lines it holds, or git -C %s revert %s restores them (then push)\n",
			store, shortHashes([]string{r.Commit})[0])
	}
}

// forgedLogs counts the checks whose verdict is forged.
func forgedLogs(checks []logFileCheck) int {
	n := 0
	for _, c := range checks {
		if c.Verdict == "forged" {
			n++
		}
	}
	return n
}

// maxSessionsPerMinute is the most sessions one engineer is believed to
// start within one minute: several agents side by side, each started by
// hand. More is a script writing evidence.
const maxSessionsPerMinute = 12

// inhumanPace returns, for each committer whose committed session events
// start more than maxSessionsPerMinute times within some minute, the most
// sessions of theirs in one minute.
func inhumanPace(all []memfs.CommittedLine) map[string]int {
	starts := map[string][]int64{}
	for _, cl := range all {
		if cl.Commit != nil && cl.Event.Kind == domain.KindSession {
			starts[cl.Commit.Author] = append(starts[cl.Commit.Author], cl.Event.MS)
		}
	}
	out := map[string]int{}
	for who, ms := range starts {
		slices.Sort(ms)
		most := 0
		for i, j := 0, 0; j < len(ms); j++ {
			for ms[j]-ms[i] >= 60_000 {
				i++
			}
			most = max(most, j-i+1)
		}
		if most > maxSessionsPerMinute {
			out[who] = most
		}
	}
	return out
}

// debutWindow is how close together (ms) the first log files of three or
// more identities must be added for doctor to call them one debut.
const debutWindow = int64(10 * 60 * 1000)

// debutTogether returns, for each log file whose first commit came within
// debutWindow of the first log files of two or more other identities, the
// other identities: a team's engineers start at different times, while
// one pusher committing as several identities adds their files at once.
func debutTogether(all []memfs.CommittedLine) map[string][]string {
	type first struct {
		ms  int64
		who string
	}
	firsts := map[string]first{}
	for _, cl := range all {
		if cl.Commit == nil {
			continue
		}
		if f, ok := firsts[machineLog(cl.File)]; !ok || cl.Commit.MS < f.ms {
			firsts[machineLog(cl.File)] = first{cl.Commit.MS, cl.Commit.Author}
		}
	}
	out := map[string][]string{}
	for file, f := range firsts {
		var others []string
		for other, g := range firsts {
			if other != file && g.who != f.who && abs64(g.ms-f.ms) <= debutWindow {
				others = addSorted(others, g.who)
			}
		}
		if len(others) >= 2 {
			out[file] = others
		}
	}
	return out
}

// machineLog is the first file of the machine's log that file belongs to
// (its segment 0), or file itself when it is no segment of a node's log.
func machineLog(file string) string {
	if node, k, ok := memfs.LogNode(file); ok && k > 0 {
		return memfs.LogDir + "/" + node + ".jsonl"
	}
	return file
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
