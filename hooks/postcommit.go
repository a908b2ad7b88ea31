package hooks

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
	"github.com/borg-memory/borg/memfs/gitcli"
)

// CommitLog records, on this machine, which agent session made which commit
// in which repository and which lessons that session had been asked. A later
// commit that rewrites those lines reads it to find regrets. It is local
// (.borg/local/commits.tsv) because commit ids of a user's project are not
// the team's business; the regret events it leads to are shared.
type CommitLog struct{ Path string }

// CommitRecord is one line of the commit log.
type CommitRecord struct {
	Commit  string
	Session string
	Repo    string
	Asked   []string
}

// Append adds one record.
func (c CommitLog) Append(r CommitRecord) error {
	if err := os.MkdirAll(filepath.Dir(c.Path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(c.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open commit log: %w", err)
	}
	line := strings.Join([]string{r.Commit, r.Session, r.Repo, strings.Join(r.Asked, ",")}, "\t") + "\n"
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Load reads the records of one repository, keyed by commit id. Malformed
// lines are skipped.
func (c CommitLog) Load(repo string) (map[string]CommitRecord, error) {
	f, err := os.Open(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]CommitRecord{}
	// Read by lines of any length: one over a scanner's limit (a corrupt
	// file, a session asked a great many lessons) must not stop every
	// later commit's record.
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return out, err
		}
		if line == "" && err != nil {
			break
		}
		p := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(p) != 4 || p[2] != repo || len(p[0]) < 7 {
			continue
		}
		r := CommitRecord{Commit: p[0], Session: p[1], Repo: p[2]}
		if p[3] != "" {
			r.Asked = strings.Split(p[3], ",")
		}
		out[r.Commit] = r
	}
	return out, nil
}

// latestPath names the file holding the latest active session of a repo.
func (s StateStore) latestPath(repo string) string {
	return filepath.Join(s.Dir, "latest-"+strings.NewReplacer("/", "_", "\\", "_").Replace(repo))
}

// MarkActive notes that session is the latest one active in repo, so that a
// git hook (which does not know the agent's session) can attribute commits.
func (s StateStore) MarkActive(repo, session string) error {
	if repo == "" {
		return nil
	}
	return writeFileAtomic(s.latestPath(repo), []byte(session), 0o644, fsutil.NoSync()) // as the session state
}

// sessionCommitWindow bounds how long after a session's last hook a commit
// in its repository is taken for its work (the agent's changes committed
// by the engineer, the same day).
const sessionCommitWindow = 12 * time.Hour

// activeWithin reports whether session's state was written (by any of its
// hooks) within window of nowMS.
func (s StateStore) activeWithin(session string, nowMS int64, window time.Duration) bool {
	fi, err := os.Stat(s.path(session))
	return err == nil && time.UnixMilli(nowMS).Sub(fi.ModTime()) <= window
}

// Latest returns the latest active session of repo, or "".
func (s StateStore) Latest(repo string) string {
	b, err := os.ReadFile(s.latestPath(repo))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// maxBlameFiles bounds the blame work of one commit.
const maxBlameFiles = 20

// PostCommit is git's post-commit hook: it records the commit against the
// agent session working in the repository (if any), turns a fix of lines an
// earlier asked session wrote into regret events for the lessons it was
// asked, and flags lessons anchored on files the commit changed.
func PostCommit(ctx context.Context, d *Deps, cwd string) (*Output, error) {
	root := RepoRoot(cwd)
	if root == "" {
		return nil, errors.New("not inside a git repository")
	}
	repo := RepoTag(root)
	if d.Engineer == "" && d.ResolveEngineer != nil {
		d.Engineer = d.ResolveEngineer(root)
	}
	head, err := d.Commit, error(nil)
	if !gitcli.IsObjectName(head) {
		head, err = ReadHead(root)
	}
	if err != nil {
		// An unusual layout (reftable, a detached worktree): ask git.
		out, gerr := git(ctx, root, "rev-parse", "HEAD")
		if gerr != nil {
			return nil, fmt.Errorf("read HEAD: %w", gerr)
		}
		head = strings.TrimSpace(out)
	}
	session := d.States.Latest(repo)
	if session != "" && !d.States.activeWithin(session, d.nowMS(), sessionCommitWindow) {
		// The repository's last session ended long ago: this commit is
		// someone's own work, not that session's.
		session = ""
	}
	if session != "" {
		st, err := d.States.Load(session)
		if err == nil {
			if err := d.Commits.Append(CommitRecord{Commit: head, Session: session, Repo: repo, Asked: st.EverAsk}); err != nil {
				return nil, fmt.Errorf("record commit: %w", err)
			}
		}
	}
	records, err := d.Commits.Load(repo)
	if err != nil {
		return nil, fmt.Errorf("read commit log: %w", err)
	}
	needBlame := false
	for c, r := range records {
		if c != head && r.Session != session && len(r.Asked) > 0 {
			needBlame = true
			break
		}
	}
	var anchors map[string][]string
	if d.Anchors != nil {
		anchors = d.Anchors()
	}
	if !needBlame && len(anchors) == 0 {
		return nil, nil
	}
	// The first line is the commit's committer time (--format=%ct), which
	// no diff line is mistaken for.
	diff, err := git(ctx, root, "-c", "core.quotePath=false", "diff-tree", "-p", "-U0", "--no-color", "--no-ext-diff", "--no-renames", "-r", "--root", "--format=%ct", head)
	if err != nil {
		return nil, fmt.Errorf("diff HEAD: %w", err)
	}
	files := parseHunks(diff)
	var events []domain.Event
	if needBlame {
		events = d.regrets(ctx, root, repo, session, head, files, records)
		// A regret is stamped with the fixing commit's time, not the
		// hook's: the hook run again for the same commit (by hand, by a
		// second hook manager, after a timeout) writes the same events,
		// with the same ids, which readers count once.
		stamp, _, _ := strings.Cut(diff, "\n")
		if ct, perr := strconv.ParseInt(strings.TrimSpace(stamp), 10, 64); perr == nil {
			for i := range events {
				events[i].MS = ct * 1000
			}
		}
	}
	if err := d.flagAnchors(head, files, anchors); err != nil {
		return nil, err
	}
	if len(events) > 0 {
		if err := d.Store.Append(events...); err != nil {
			return nil, fmt.Errorf("record regrets: %w", err)
		}
	}
	return nil, nil
}

// fileHunks lists, for one file, the parent's line ranges a commit removed
// or rewrote.
type fileHunks struct {
	path   string
	ranges [][2]int // start, count in the parent
	added  int
}

var hunkHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`) })

func parseHunks(diff string) []fileHunks {
	var out []fileHunks
	var cur *fileHunks
	eachDiffLine(diff, func(kind int, text string) {
		switch {
		case kind == diffOldPath:
			out = append(out, fileHunks{path: text})
			cur = &out[len(out)-1]
		case kind == diffNewPath && cur != nil:
			if cur.path == "/dev/null" {
				cur.path = text
			}
		case kind == diffHunk && cur != nil:
			m := hunkHeader().FindStringSubmatch(text)
			start, _ := strconv.Atoi(m[1])
			count, added := hunkCount(m[2]), hunkCount(m[4])
			cur.added += added
			if count > 0 {
				cur.ranges = append(cur.ranges, [2]int{start, count})
			}
		}
	})
	return out
}

// regrets blames the parent's lines this commit rewrote; lines an earlier
// asked session wrote become that session's regret, shared among the lessons
// it was asked. W is the share of the commit's rewritten lines.
func (d *Deps) regrets(ctx context.Context, root, repo, session, head string, files []fileHunks, records map[string]CommitRecord) []domain.Event {
	bySession := map[string]int{}
	asked := map[string][]string{}
	total := 0
	for i, f := range files {
		if i == maxBlameFiles || ctx.Err() != nil {
			break
		}
		if f.path == "/dev/null" || len(f.ranges) == 0 {
			continue
		}
		args := []string{"blame", "--porcelain"}
		for _, r := range f.ranges {
			args = append(args, "-L", fmt.Sprintf("%d,+%d", r[0], r[1]))
		}
		args = append(args, head+"^", "--", f.path)
		out, err := git(ctx, root, args...)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(out, "\n") {
			// Porcelain: each blamed line starts "<40-hex> <orig> <final> [n]".
			fields := strings.Fields(line)
			if len(fields) < 3 || len(fields[0]) != 40 || strings.HasPrefix(line, "\t") {
				continue
			}
			total++
			if r, ok := records[fields[0]]; ok && r.Session != session && len(r.Asked) > 0 {
				bySession[r.Session]++
				asked[r.Session] = r.Asked
			}
		}
	}
	if total == 0 {
		return nil
	}
	sessions := make([]string, 0, len(bySession))
	for s := range bySession {
		sessions = append(sessions, s)
	}
	sort.Strings(sessions)
	var events []domain.Event
	for _, s := range sessions {
		ids := dedupe(asked[s])
		share := float64(bySession[s]) / float64(total) / float64(len(ids))
		for _, id := range ids {
			e := d.event(domain.KindRegret, s, id, repo)
			e.W = regretW(share)
			events = append(events, e)
		}
	}
	return events
}

// flagAnchors notes lessons anchored on files this commit changed, for
// `borg doctor` and review (.borg/local/anchors.jsonl).
func (d *Deps) flagAnchors(head string, files []fileHunks, anchors map[string][]string) error {
	if len(anchors) == 0 {
		return nil
	}
	type flag struct {
		Lesson string `json:"lesson"`
		Path   string `json:"path"`
		Commit string `json:"commit"`
		MS     int64  `json:"ms"`
	}
	var lines []string
	for _, f := range files {
		for _, id := range anchors[f.path] {
			b, _ := json.Marshal(flag{id, f.path, head, d.nowMS()})
			lines = append(lines, string(b))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	path := filepath.Join(filepath.Dir(d.Commits.Path), "anchors.jsonl") // memfs.AnchorFlagsFile
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("flag anchors: %w", err)
	}
	fh, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("flag anchors: %w", err)
	}
	_, err = fh.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// minRegretW is the smallest regret share written: a share that rounds to 0
// would be written without its w, and a reader counts a regret without w as
// a full one.
const minRegretW = 0.0001

// regretW is the w a regret event carries for share: rounded to 4 decimals,
// never below minRegretW.
func regretW(share float64) float64 { return max(roundTo(share, 4), minRegretW) }

func roundTo(x float64, places int) float64 {
	p := 1.0
	for i := 0; i < places; i++ {
		p *= 10
	}
	return float64(int64(x*p+0.5)) / p
}

// ReadHead resolves a repository's HEAD to a commit id from the files, without
// starting git: post-commit runs on every commit and must stay cheap. It
// follows a .git file (worktrees, submodules), a symbolic HEAD, loose refs
// and packed-refs; anything else is an error and the caller asks git.
func ReadHead(root string) (string, error) {
	d, err := gitcli.FindDirs(root)
	if err != nil {
		return "", err
	}
	return d.ReadRef("HEAD")
}
