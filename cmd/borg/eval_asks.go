package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/index"
)

// An ask set is a labelled benchmark of the Stop hook's asks: a team's
// lessons and agent sessions, each session labelled with the lessons that
// bear on its work (cmd/borg/testdata/asks/README.md). `borg eval asks`
// learns the lessons into a store with borg learn, plays every session
// through the real hooks (session start, prompt, the agent's edits, stop)
// on a fresh copy of that store, and reads what the Stop hook asked.

// askLesson is one lesson of an ask set.
type askLesson struct {
	Key   string   `json:"key"`
	Title string   `json:"title,omitempty"`
	Gist  string   `json:"gist"`
	Body  string   `json:"body,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	// Replaces is the key of an older lesson this one rewrites (learned
	// later than every other lesson).
	Replaces string `json:"replaces,omitempty"`
}

// askFile is a file an agent's session touched, with the lines it added.
type askFile struct {
	Path  string `json:"path"`
	Added string `json:"added"`
}

// askSession is one agent session of an ask set.
type askSession struct {
	ID       string    `json:"id"`
	Prompt   string    `json:"prompt"`
	Final    string    `json:"final"`
	Files    []askFile `json:"files,omitempty"`
	Relevant []string  `json:"relevant"`
	Stale    []string  `json:"stale,omitempty"`
}

// askSet is a named set of lessons and sessions.
type askSet struct {
	Name     string
	Lessons  []askLesson
	Sessions []askSession
}

// readJSONL decodes every non-blank line of path into a T.
func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// loadAskSet reads an ask set's folder (lessons.jsonl, sessions.jsonl) and
// checks that every key a session or lesson names exists.
func loadAskSet(dir string) (askSet, error) {
	set := askSet{Name: filepath.Base(filepath.Clean(dir))}
	var err error
	if set.Lessons, err = readJSONL[askLesson](filepath.Join(dir, "lessons.jsonl")); err != nil {
		return set, fmt.Errorf("read ask set: %w (an ask set folder holds lessons.jsonl and sessions.jsonl)", err)
	}
	if set.Sessions, err = readJSONL[askSession](filepath.Join(dir, "sessions.jsonl")); err != nil {
		return set, fmt.Errorf("read ask set: %w", err)
	}
	keys := map[string]bool{}
	for _, l := range set.Lessons {
		if l.Key == "" || strings.TrimSpace(l.Gist) == "" || keys[l.Key] {
			return set, fmt.Errorf("read ask set %s: lesson %q: a lesson needs a unique key and a gist", dir, l.Key)
		}
		keys[l.Key] = true
	}
	for _, l := range set.Lessons {
		if l.Replaces != "" && !keys[l.Replaces] {
			return set, fmt.Errorf("read ask set %s: lesson %s replaces %q, which the set does not hold", dir, l.Key, l.Replaces)
		}
	}
	for _, s := range set.Sessions {
		for _, k := range append(slices.Clone(s.Relevant), s.Stale...) {
			if !keys[k] {
				return set, fmt.Errorf("read ask set %s: session %s names lesson %q, which the set does not hold", dir, s.ID, k)
			}
		}
	}
	return set, nil
}

// locomoAskSet builds an ask set from two BEIR-layout LoCoMo conversations:
// the lessons are the turns of own, learned one by one (the whole turn as
// the gist); the sessions are up to n judged questions about own (relevant:
// their evidence turns) and up to 2n about other, which no lesson of own
// bears on.
func locomoAskSet(own, other string, n int) (askSet, error) {
	set := askSet{Name: filepath.Base(own) + "+" + filepath.Base(other)}
	docs, ownQs, err := index.ReadEvalFolder(own, "test")
	if err != nil {
		return set, err
	}
	held := map[string]bool{}
	for _, d := range docs {
		if text := strings.TrimSpace(d.Gist + " " + d.Body); text != "" {
			set.Lessons = append(set.Lessons, askLesson{Key: d.ID, Gist: text})
			held[d.ID] = true
		}
	}
	for _, q := range ownQs {
		if len(set.Sessions) == n {
			break
		}
		s := askSession{ID: filepath.Base(own) + "/" + q.ID, Prompt: q.Text, Relevant: []string{}}
		for d, grade := range q.Relevant {
			if grade > 0 && held[d] {
				s.Relevant = append(s.Relevant, d)
			}
		}
		if len(s.Relevant) > 0 {
			slices.Sort(s.Relevant)
			set.Sessions = append(set.Sessions, s)
		}
	}
	_, otherQs, err := index.ReadEvalFolder(other, "test")
	if err != nil {
		return set, err
	}
	for _, q := range otherQs[:min(2*n, len(otherQs))] {
		set.Sessions = append(set.Sessions, askSession{ID: filepath.Base(other) + "/" + q.ID, Prompt: q.Text, Relevant: []string{}})
	}
	return set, nil
}

// askReport is what `borg eval asks` measured on one set.
type askReport struct {
	Set string `json:"set"`
	// Lessons learned, and those borg learn refused.
	Lessons int `json:"lessons"`
	Refused int `json:"refused"`
	// Sessions played; Empty of them have no relevant lesson.
	Sessions int `json:"sessions"`
	Empty    int `json:"empty"`
	// Abstention is the share of empty sessions left unblocked;
	// SessionRecall the share of the others asked at least one relevant
	// lesson; Precision the share of asked lessons that are relevant.
	Abstention    float64 `json:"abstention"`
	SessionRecall float64 `json:"session_recall"`
	Precision     float64 `json:"precision"`
	// Blocked counts blocked sessions, Asked the lessons asked (the
	// placebo control's are not asks: they are never recorded as shared
	// evidence), StaleAsks the asked lessons a newer lesson of the set
	// rewrites.
	Blocked   int `json:"blocked"`
	Asked     int `json:"asked"`
	Relevant  int `json:"asked_relevant"`
	StaleAsks int `json:"stale_asks"`
	// Misses lists the sessions with a relevant lesson that asked none of
	// them, Needless those with none that were blocked, and Stale each
	// session that asked a rewritten fact, with its key: all of them (the
	// table prints the first askListed of each).
	Misses   []string `json:"misses,omitempty"`
	Needless []string `json:"needless,omitempty"`
	Stale    []string `json:"stale,omitempty"`
	// Margins, with --margins, says where the sessions lie against the
	// floor.
	Margins *askMargins `json:"margins,omitempty"`
}

// askMargins counts a set's sessions by the best relevance a recall of
// their work gives: a session with a relevant lesson by the best of its
// relevant lessons, one with none by the best of any lesson (under every
// cut when the recall lists none of them). Band i holds the sessions at or
// over Cuts[i-1] and under Cuts[i]; with a floor, the last cut is the
// floor, so the last band is what clears it. Sessions of both kinds in one
// band are what no floor can tell apart.
type askMargins struct {
	Floor    float64   `json:"floor"` // 0: none
	Cuts     []float64 `json:"cuts"`
	Relevant []int     `json:"relevant"`
	Empty    []int     `json:"empty"`
}

// add counts one session of relevance r.
func (m *askMargins) add(r float64, relevant bool) {
	band := sort.SearchFloat64s(m.Cuts, r)
	if band < len(m.Cuts) && m.Cuts[band] == r {
		band++ // a cut belongs to the band it opens
	}
	if relevant {
		m.Relevant[band]++
	} else {
		m.Empty[band]++
	}
}

// newAskMargins has bands cut at 0.1, 0.2 and 0.3 and at floor, leaving
// out the cuts over a floor; floor 0 is none.
func newAskMargins(floor float64) *askMargins {
	m := &askMargins{Floor: floor}
	for _, c := range []float64{0.1, 0.2, 0.3} {
		if floor == 0 || c < floor {
			m.Cuts = append(m.Cuts, c)
		}
	}
	if floor > 0 {
		m.Cuts = append(m.Cuts, floor)
	}
	m.Relevant, m.Empty = make([]int, len(m.Cuts)+1), make([]int, len(m.Cuts)+1)
	return m
}

// askEval plays ask sets through the real hooks.
type askEval struct {
	e        *env
	progress io.Writer
	// margins: also recall each session's work (askMargins).
	margins bool
}

// borg runs one borg command in process, as the CLI would, with vars as
// its environment over e's.
func (a *askEval) borg(ctx context.Context, vars map[string]string, now time.Time, stdin string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	e := &env{in: strings.NewReader(stdin), out: &out, err: &errb, now: func() time.Time { return now },
		getenv: func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			return a.e.getenv(k)
		}}
	if code := run(ctx, append([]string{"borg"}, args...), e); code != 0 {
		return out.String(), fmt.Errorf("borg %s: exit %d: %s", args[0], code, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// run learns set into a throwaway store under dir and plays its sessions.
func (a *askEval) run(ctx context.Context, set askSet, dir string) (askReport, error) {
	rep := askReport{Set: set.Name}
	store := filepath.Join(dir, "store")
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return rep, err
	}
	vars := map[string]string{"BORG_STORE": store, "HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"BORG_ENGINEER": "asks@example.com", "BORG_AUTOSYNC": "off"}
	now := time.Date(2026, 9, 1, 9, 0, 0, 0, time.UTC)
	if _, err := a.borg(ctx, vars, now, "", "init"); err != nil {
		return rep, err
	}
	// Every lesson, then the rewrites two months later, as a team writes
	// them; a minute apart, so a rewrite is always the newer.
	ids := map[string]string{} // key → lesson id
	learn := func(l askLesson) error {
		args := []string{"learn", "--json"}
		if l.Title != "" {
			args = append(args, "--title", l.Title)
		}
		if l.Body != "" {
			args = append(args, "--body", l.Body)
		}
		for _, t := range l.Tags {
			args = append(args, "--tag", t)
		}
		out, err := a.borg(ctx, vars, now, "", append(args, "--", l.Gist)...)
		now = now.Add(time.Minute)
		if err != nil {
			rep.Refused++
			fmt.Fprintf(a.progress, "%s: lesson %s not learned: %v\n", set.Name, l.Key, err)
			return nil
		}
		var got struct{ ID string }
		if err := json.Unmarshal([]byte(out), &got); err != nil || got.ID == "" {
			return fmt.Errorf("learn %s: unexpected output %q", l.Key, out)
		}
		ids[l.Key] = got.ID
		rep.Lessons++
		return nil
	}
	replaced := map[string]bool{} // lesson ids a newer lesson rewrites
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			now = now.Add(60 * 24 * time.Hour)
		}
		for i, l := range set.Lessons {
			if (l.Replaces != "") != (pass == 1) {
				continue
			}
			if err := learn(l); err != nil {
				return rep, err
			}
			if a.progress != nil && isTerminal(a.progress) && i%50 == 0 {
				fmt.Fprintf(a.progress, "\r%s: learned %d/%d lessons", set.Name, rep.Lessons, len(set.Lessons))
			}
		}
	}
	for _, l := range set.Lessons {
		if l.Replaces != "" && ids[l.Key] != "" {
			replaced[ids[l.Replaces]] = true
		}
	}
	// A team's store reaches a teammate packed (a clone), and a packed
	// store is a few files to copy per session.
	if err := gitIn(ctx, store, "repack", "-adq"); err != nil {
		return rep, err
	}
	// One recall builds the index and the log's summary the hooks then
	// find up to date in every copy.
	if _, err := a.borg(ctx, vars, now, "", "recall", "warm up"); err != nil {
		return rep, err
	}
	proj := filepath.Join(dir, "project")
	if err := newAskProject(ctx, proj); err != nil {
		return rep, err
	}
	keyOf := map[string]string{}
	for k, id := range ids {
		keyOf[id] = k
	}
	now = now.Add(24 * time.Hour)
	emptyLeft, withHit := 0, 0
	if a.margins {
		rep.Margins = newAskMargins(index.Query{Floor: hookFloor(a.e.getenv)}.EffectiveFloor())
	}
	for i, s := range set.Sessions {
		if a.progress != nil && isTerminal(a.progress) {
			fmt.Fprintf(a.progress, "\r%s: session %d/%d", set.Name, i+1, len(set.Sessions))
		}
		asked, blocked, err := a.playSession(ctx, vars, store, filepath.Join(dir, "s"), proj, s, now)
		if err != nil {
			return rep, fmt.Errorf("session %s: %w", s.ID, err)
		}
		if rep.Margins != nil {
			best, err := a.bestRelevance(ctx, vars, filepath.Join(dir, "s"), hooks.RepoTag(proj), now, s, ids, len(set.Lessons))
			if err != nil {
				return rep, fmt.Errorf("session %s: %w", s.ID, err)
			}
			rep.Margins.add(best, len(s.Relevant) > 0)
		}
		now = now.Add(time.Hour)
		rep.Sessions++
		relevant := map[string]bool{}
		for _, k := range s.Relevant {
			relevant[k] = true
		}
		if blocked {
			rep.Blocked++
		}
		hit := false
		for _, id := range asked {
			rep.Asked++
			if relevant[keyOf[id]] {
				rep.Relevant++
				hit = true
			}
			if replaced[id] {
				rep.StaleAsks++
				rep.Stale = append(rep.Stale, s.ID+": "+keyOf[id])
			}
		}
		switch {
		case len(s.Relevant) == 0:
			rep.Empty++
			if !blocked {
				emptyLeft++
			} else {
				rep.Needless = append(rep.Needless, s.ID+": "+strings.Join(keysOf(asked, keyOf), ","))
			}
		case hit:
			withHit++
		default:
			rep.Misses = append(rep.Misses, s.ID+": asked "+strings.Join(keysOf(asked, keyOf), ",")+"; wanted "+strings.Join(s.Relevant, ","))
		}
	}
	if a.progress != nil && isTerminal(a.progress) {
		fmt.Fprintln(a.progress)
	}
	rep.Abstention = ratio(emptyLeft, rep.Empty)
	rep.SessionRecall = ratio(withHit, rep.Sessions-rep.Empty)
	rep.Precision = ratio(rep.Relevant, rep.Asked)
	return rep, nil
}

// bestRelevance recalls s's work (its prompt, its final message, and each
// file's path and added lines: the text the Stop hook's query is built
// from, which the hook clips at 4,000 bytes a part) in the store copy the
// session just played in, for the session's repository, and
// returns the best relevance of one of its relevant lessons, or of any
// lesson when it has none; -1 when the recall, of all the set's n lessons,
// lists none of them (ids: each key's lesson id).
func (a *askEval) bestRelevance(ctx context.Context, vars map[string]string, copyDir, repo string, now time.Time, s askSession, ids map[string]string, n int) (float64, error) {
	v := make(map[string]string, len(vars)+1)
	for k, x := range vars {
		v[k] = x
	}
	v["BORG_STORE"] = copyDir
	q := []string{s.Prompt, s.Final}
	for _, f := range s.Files {
		q = append(q, f.Path, f.Added)
	}
	out, err := a.borg(ctx, v, now, "", "recall", "--json", "-k", fmt.Sprint(max(n, 1)), "--repo", repo, "--", strings.Join(q, "\n"))
	if err != nil {
		return 0, err
	}
	var hits []struct {
		ID        string  `json:"id"`
		Relevance float64 `json:"relevance"`
	}
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		return 0, fmt.Errorf("recall printed %q: %w", out, err)
	}
	want := map[string]bool{}
	for _, k := range s.Relevant {
		want[ids[k]] = true
	}
	best := -1.0
	for _, h := range hits {
		if len(want) == 0 || want[h.ID] {
			best = max(best, h.Relevance)
		}
	}
	return best, nil
}

func keysOf(ids []string, keyOf map[string]string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = keyOf[id]
	}
	return out
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// newAskProject makes the project the sessions work in: a git repository
// with one commit.
func newAskProject(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(askReadme), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "README.md"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start"}} {
		if err := gitIn(ctx, dir, args...); err != nil {
			return err
		}
	}
	return nil
}

// askReadme is the one file an ask project's first commit holds.
const askReadme = "# service\n"

// resetAskProject puts proj back as newAskProject made it, before each
// session: what `git clean -fdx` and `git reset --hard` would do, with no
// git process unless a session appended to the README (the only tracked
// file); a session's files are all new to the project otherwise, and the
// index, which git alone writes, is then as it was.
func resetAskProject(ctx context.Context, proj string) error {
	entries, err := os.ReadDir(proj)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if name := e.Name(); name != ".git" && name != "README.md" {
			if err := os.RemoveAll(filepath.Join(proj, name)); err != nil {
				return err
			}
		}
	}
	if raw, err := os.ReadFile(filepath.Join(proj, "README.md")); err == nil && string(raw) == askReadme {
		return nil
	}
	return gitIn(ctx, proj, "reset", "-q", "--hard")
}

func gitIn(ctx context.Context, dir string, args ...string) error {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s in %s: %v: %s", args[0], dir, err, out)
	}
	return nil
}

// playSession plays s on a fresh copy of store: the session starts, the
// user's prompt, the agent's edits, the agent's stop. It returns the
// lessons the Stop hook asked (as recorded in the copy's log) and whether
// it blocked.
func (a *askEval) playSession(ctx context.Context, vars map[string]string, store, copyDir, proj string, s askSession, now time.Time) (asked []string, blocked bool, err error) {
	if err := os.RemoveAll(copyDir); err != nil {
		return nil, false, err
	}
	if err := copyTree(store, copyDir); err != nil {
		return nil, false, err
	}
	if err := resetAskProject(ctx, proj); err != nil {
		return nil, false, err
	}
	v := map[string]string{}
	for k, x := range vars {
		v[k] = x
	}
	v["BORG_STORE"] = copyDir
	hook := func(verb string, in map[string]any) (string, error) {
		in["session_id"], in["cwd"] = "ask-"+s.ID, proj
		raw, _ := json.Marshal(in)
		return a.borg(ctx, v, now, string(raw), "hook", verb)
	}
	if _, err := hook("session-start", map[string]any{"hook_event_name": "SessionStart", "source": "startup"}); err != nil {
		return nil, false, err
	}
	if _, err := hook("prompt", map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": s.Prompt}); err != nil {
		return nil, false, err
	}
	for _, f := range s.Files {
		p := filepath.Join(proj, filepath.FromSlash(f.Path))
		if !strings.HasPrefix(p, proj+string(filepath.Separator)) {
			return nil, false, fmt.Errorf("file %q is outside the project", f.Path)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, false, err
		}
		fh, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, false, err
		}
		_, err = fmt.Fprintln(fh, f.Added)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, false, err
		}
	}
	out, err := hook("stop", map[string]any{"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": s.Final})
	if err != nil {
		return nil, false, err
	}
	var dec struct {
		Decision string `json:"decision"`
	}
	if strings.TrimSpace(out) != "" {
		if err := json.Unmarshal([]byte(out), &dec); err != nil {
			return nil, false, fmt.Errorf("stop hook printed %q: %v", out, err)
		}
	}
	asked, err = askedIn(copyDir)
	return asked, dec.Decision == "block", err
}

// askedIn lists the lessons asked in a store's log files (this machine's
// shared and local logs), sorted.
func askedIn(store string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(raw), "\n") {
			var ev struct{ Kind, Lesson string }
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Kind == "asked" && ev.Lesson != "" {
				out = append(out, ev.Lesson)
			}
		}
		return nil
	})
	sort.Strings(out)
	return slices.Compact(out), err
}

// sharedInCopy reports the store files a session never changes in place,
// which a copy may share with the original: git's objects, the lesson
// files and the index files (replaced whole by rename, never rewritten).
// Logs, which a hook appends to, and everything else are copied.
func sharedInCopy(rel string) bool {
	for _, dir := range []string{".git/objects/", "lessons/", ".borg/index/"} {
		if strings.HasPrefix(rel, dir) {
			return !strings.HasSuffix(rel, ".jsonl") && !strings.HasSuffix(rel, "lock")
		}
	}
	return false
}

// copyTree copies a directory tree (regular files, folders and symlinks),
// keeping modification times, so that a copied store's index finds its
// lessons as it left them; the files no session rewrites (sharedInCopy)
// are hard-linked where the file system allows it.
func copyTree(src, dst string) error {
	type dirTime struct {
		path string
		mod  time.Time
	}
	var dirs []dirTime
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			dirs = append(dirs, dirTime{to, info.ModTime()})
			return os.MkdirAll(to, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			if sharedInCopy(filepath.ToSlash(rel)) && os.Link(p, to) == nil {
				return nil
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, raw, info.Mode().Perm()); err != nil {
				return err
			}
		default:
			return nil // sockets and the like: nothing a store needs
		}
		return os.Chtimes(to, info.ModTime(), info.ModTime())
	})
	// A folder's time last: writing into it moved it.
	for i := len(dirs) - 1; i >= 0 && err == nil; i-- {
		err = os.Chtimes(dirs[i].path, dirs[i].mod, dirs[i].mod)
	}
	return err
}

// errNoAskSets says where ask sets come from.
var errNoAskSets = errors.New("eval asks takes ask-set folders (lessons.jsonl, sessions.jsonl), e.g. cmd/borg/testdata/asks/lumen, or --locomo OWN,OTHER with two BEIR LoCoMo folders")

// runAskEvals plays each set in its own throwaway folder.
func runAskEvals(ctx context.Context, e *env, sets []askSet, keep, margins bool) ([]askReport, error) {
	a := &askEval{e: e, progress: e.err, margins: margins}
	var reps []askReport
	for _, set := range sets {
		dir, err := os.MkdirTemp("", "borg-eval-asks-")
		if err != nil {
			return nil, err
		}
		rep, err := a.run(ctx, set, dir)
		if keep {
			fmt.Fprintf(e.err, "%s: kept in %s\n", set.Name, dir)
		} else {
			_ = os.RemoveAll(dir)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", set.Name, err)
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

// askListed is how many misses, needless asks and stale asks of a set the
// table prints.
const askListed = 10

// writeAskTable prints one row per set, then each set's misses, needless
// asks and stale asks.
func writeAskTable(w io.Writer, reps []askReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "set\tlessons\tsessions\tnone relevant\tabstention\tsession recall\tprecision\tasked\tstale asks")
	for _, r := range reps {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\t%.3f\t%.3f\t%d\t%d\n", r.Set, r.Lessons, r.Sessions, r.Empty,
			r.Abstention, r.SessionRecall, r.Precision, r.Asked, r.StaleAsks)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range reps {
		for _, l := range []struct {
			what, more string
			items      []string
		}{{"missed", "missed sessions", r.Misses}, {"needless ask", "needless asks", r.Needless}, {"stale ask", "stale asks", r.Stale}} {
			for _, m := range l.items[:min(len(l.items), askListed)] {
				fmt.Fprintf(w, "%s: %s %s\n", r.Set, l.what, m)
			}
			if n := len(l.items) - askListed; n > 0 {
				fmt.Fprintf(w, "%s: %d more %s (--json lists them all)\n", r.Set, n, l.more)
			}
		}
	}
	for _, r := range reps {
		if m := r.Margins; m != nil {
			fmt.Fprintf(w, "%s: margins, sessions by best relevance (relevant lesson / any lesson where none is relevant):", r.Set)
			lo := "0"
			for i, c := range m.Cuts {
				fmt.Fprintf(w, " [%s, %.2f) %d/%d", lo, c, m.Relevant[i], m.Empty[i])
				lo = fmt.Sprintf("%.2f", c)
			}
			n := len(m.Cuts)
			if m.Floor > 0 {
				fmt.Fprintf(w, " over the floor %d/%d\n", m.Relevant[n], m.Empty[n])
			} else {
				fmt.Fprintf(w, " %s and over %d/%d (no floor)\n", lo, m.Relevant[n], m.Empty[n])
			}
		}
	}
	return nil
}
