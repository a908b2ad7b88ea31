package memfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
)

// Errors returned by the store. Match them with errors.Is.
var (
	// ErrNotFound: no lesson, file or ref has that name.
	ErrNotFound = errors.New("not found")
	// ErrNotStore: the directory is not a borg store.
	ErrNotStore = errors.New("not a borg store")
	// ErrStoreExists: Init found a store already there.
	ErrStoreExists = errors.New("a borg store already exists")
	// ErrRefMoved: CommitOnRef's compare-and-swap lost a race.
	ErrRefMoved = errors.New("ref moved")
	// ErrNoChanges: a commit would leave the tree as it is.
	ErrNoChanges = errors.New("no changes")
	// ErrUnsupportedRepo: the store's repository is in a format borg does
	// not read and write (SHA-256 object names, reftable refs).
	ErrUnsupportedRepo = errors.New("unsupported repository format")
)

// The store's layout (docs/formats.md).
const (
	LessonsDir  = "lessons"
	ArchiveDir  = "archive"
	LogDir      = "log"
	PrivateDir  = ".borg"
	localLogDir = ".borg/local"
	cacheDir    = ".borg/cache"
	tmpDir      = ".borg/tmp"
	nodeFile    = ".borg/node"
)

const gitattributes = "log/*.jsonl merge=union\n"
const gitignore = ".borg/\n"

// Store is a borg store: a git repository holding lessons/, archive/ and
// log/, with derived and local state under the gitignored .borg/.
type Store struct {
	dir    string
	git    *gitRepo
	getenv func(string) string
	now    func() time.Time
	warn   func(string)
	node   string
	// progress hears the advance of a build from the whole log
	// (WithProgress); nil for none.
	progress Progress
	// building: this process holds the build lock (HoldBuild), and the
	// store's own builds take it no more.
	building atomic.Bool
	// held is the store's write lock file while this process holds it
	// (writes.go); the git commands run meanwhile keep it open
	// (GitCLI).
	held atomic.Pointer[os.File]
	// owner caches whether this user may write the store (checkOwner).
	owner ownerCheck
	// settings caches the git settings of evidence and signing (evidence.go).
	settings settingsOnce
}

// Option configures a Store.
type Option func(*Store)

// WithEnv sets how the store reads its environment (BORG_SHARE_OUTCOMES,
// GIT_AUTHOR_*, GIT_COMMITTER_*); the default reads nothing.
func WithEnv(getenv func(string) string) Option {
	return func(s *Store) { s.getenv = getenv }
}

// WithClock sets the clock used for commit times; the default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

func newStore(dir string, g *gitRepo, opts []Option) *Store {
	s := &Store{dir: dir, git: g, getenv: func(string) string { return "" }, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Discover returns the store directory: the --store flag when set, else
// $BORG_STORE, else $XDG_DATA_HOME/borg/store, else
// ~/.local/share/borg/store (HOME read through getenv), else "" (no
// absolute HOME: Open and Init refuse it).
func Discover(flag string, getenv func(string) string) string {
	if flag != "" {
		return flag
	}
	if d := getenv("BORG_STORE"); d != "" {
		return d
	}
	// A relative XDG_DATA_HOME is ignored (the XDG spec says so), and a
	// default is never relative: without an absolute HOME there is none,
	// and Open and Init say so instead of using the working directory.
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "borg", "store")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, ".local", "share", "borg", "store")
}

// Init creates a store in dir (made if missing), or clones remote into it
// when remote is set, lays out lessons/, archive/, log/, .gitattributes and
// .gitignore, gives this machine a node id, and commits the layout. It
// returns an error wrapping ErrStoreExists when dir already holds a store.
func Init(ctx context.Context, dir, remote string, opts ...Option) (*Store, error) {
	s, err := initStore(ctx, dir, remote, opts)
	if err != nil {
		return nil, fmt.Errorf("init store %s: %w", dir, err)
	}
	return s, nil
}

func initStore(ctx context.Context, dir, remote string, opts []Option) (*Store, error) {
	if dir == "" {
		return nil, noStoreDir()
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if isStore(dir) {
		return nil, ErrStoreExists
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file, not a directory: choose a directory for the store", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var g *gitRepo
	emptyRemote := false // cloned a remote with nothing pushed yet
	_, statErr := os.Stat(filepath.Join(dir, ".git"))
	switch {
	case statErr == nil:
		if g, err = openGit(dir); err != nil {
			return nil, err
		}
		if g.hasCommits() && hasLessonsRepo(dir) {
			return nil, fmt.Errorf("%s is a git repository with a lessons/ folder but not a borg store (its .gitattributes lacks %q): choose another directory for the store", dir, strings.TrimSpace(gitattributes))
		}
		if g.hasCommits() {
			return nil, fmt.Errorf("%s is a git repository with history but no lessons/: choose another directory for the store", dir)
		}
	case remote != "":
		if g, err = cloneGit(ctx, dir, remote); err != nil {
			return nil, fmt.Errorf("clone %s: %w%s", remote, err, cloneFix(remote, err))
		}
		if g.hasCommits() && !hasLessonsRepo(dir) {
			// A project's repository, say: the store's first commit and
			// every sync would land in it. The clone goes (git cloned
			// into an empty directory: all of it is the clone's).
			removeContents(dir)
			return nil, fmt.Errorf("%s is a git repository with history but no lessons/, not a team's store: give the URL of the store's own repository (an empty one starts a new store)", remote)
		}
		emptyRemote = !g.hasCommits()
		if err := configureNew(ctx, dir, g.hasCommits()); err != nil {
			return nil, err
		}
		// Before anything is written into the clone: a teammate's commit
		// may have made lessons/ or log/ a link to elsewhere.
		if err := checkStoreDirs(dir); err != nil {
			return nil, fmt.Errorf("clone %s: %w", remote, err)
		}
	default:
		if g, err = initGit(ctx, dir); err != nil {
			return nil, err
		}
		if err := configureNew(ctx, dir, false); err != nil {
			return nil, err
		}
	}
	s := newStore(dir, g, opts)
	if _, err := s.Node(); err != nil {
		return nil, err
	}
	var paths []string
	for _, d := range []string{LessonsDir, ArchiveDir, LogDir} {
		keep := filepath.Join(dir, d, ".keep")
		if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
			return nil, err
		}
		if _, err := os.Stat(keep); errors.Is(err, os.ErrNotExist) {
			if err := writeAtomic(s, keep, nil); err != nil {
				return nil, err
			}
		}
		paths = append(paths, d+"/.keep")
	}
	for name, content := range map[string]string{".gitattributes": gitattributes, ".gitignore": gitignore} {
		if err := ensureLine(s, filepath.Join(dir, name), content); err != nil {
			return nil, err
		}
		paths = append(paths, name)
	}
	sort.Strings(paths)
	if _, err := s.Commit(initMessage, paths...); err != nil {
		return nil, err
	}
	if emptyRemote {
		s.publishInit(ctx, remote)
	}
	return s, nil
}

// initMessage is the message of a store's first commit, borg init's.
const initMessage = "borg: init store"

// publishInit pushes the first commit of a store cloned from an empty
// remote at once, so that the next teammate's borg init --remote clones it
// rather than starting a second store with a history of its own. When a
// teammate's init pushed first, or the push fails, the store is kept as it
// is, and said so: sync joins two stores that both began as borg init
// (joinableRoots), and pushes what it has.
func (s *Store) publishInit(ctx context.Context, remote string) {
	branch, err := s.git.headBranch()
	if err != nil {
		return
	}
	_, err = s.runGit(ctx, nil, "push", "-q", "origin", "HEAD:"+branch.String())
	if err == nil {
		return
	}
	if ge, ok := errors.AsType[*GitError](err); ok && (strings.Contains(ge.Stderr, "fetch first") || strings.Contains(ge.Stderr, "non-fast-forward")) {
		s.warnf("a teammate pushed the first commit of a store to %s meanwhile: borg sync joins the two (both began as borg init)", remote)
		return
	}
	s.warnf("the store's first commit was not pushed to %s (%v): borg sync pushes it", remote, err)
}

// removeContents removes everything in dir.
func removeContents(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// configureNew sets, in the git config of a repository borg just made, what
// borg's commits need to stay cheap in a large store (docs/git.md), each
// unless the user's git config already says:
//   - core.splitIndex=true, so that git update-index writes the few entries
//     a commit changed instead of the whole index (10 MB at 100,000
//     lessons). git keeps the split index and re-shares it by itself;
//     go-git and libgit2 do not read one, and git config core.splitIndex
//     false in the store turns it off.
//   - index.version=4 (what feature.manyFiles asks for too), unless the
//     environment's GIT_INDEX_VERSION, which git reads first, says: paths
//     stored as their difference from the entry before, so every git that
//     reads the index reads about a third less at 100,000 lessons. A clone's
//     index, which git wrote before this setting existed, is rewritten in
//     it by git update-index --index-version (checkedOut: the repository
//     has a commit checked out, so an index).
func configureNew(ctx context.Context, dir string, checkedOut bool) error {
	g := storeGit(dir)
	// What the user's config already says, read in one git process.
	out, _ := g.Run(ctx, nil, "config", "--get-regexp", `^(core\.splitindex|index\.version)$`)
	said := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		key, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		said[key] = true
	}
	if !said["core.splitindex"] {
		if _, err := g.Run(ctx, nil, "config", "core.splitIndex", "true"); err != nil {
			return fmt.Errorf("configure the store's git: %w", err)
		}
	}
	if said["index.version"] || os.Getenv("GIT_INDEX_VERSION") != "" {
		return nil
	}
	if _, err := g.Run(ctx, nil, "config", "index.version", "4"); err != nil {
		return fmt.Errorf("configure the store's git: %w", err)
	}
	if !checkedOut {
		return nil // no index yet: git writes the first in version 4
	}
	if _, err := g.Run(ctx, nil, "update-index", "--index-version", "4"); err != nil {
		return fmt.Errorf("rewrite the clone's git index in version 4: %w", err)
	}
	return nil
}

// ensureLine makes sure file contains line, appending it if missing.
func ensureLine(s *Store, file, line string) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, l := range strings.Split(string(old), "\n") {
		if l+"\n" == line {
			return nil
		}
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	return writeAtomic(s, file, append(old, line...))
}

// isStore reports whether dir is a store: a git repository with lessons/
// and borg's mark, the line of .gitattributes every store's first commit
// has (log/*.jsonl merge=union), or this machine's node id (.borg/node,
// never committed: borg made it here, so no push can take the mark away).
// A project repository that happens to have a lessons/ folder is not one.
func isStore(dir string) bool {
	return hasLessonsRepo(dir) && marked(dir)
}

// hasLessonsRepo reports whether dir is a git repository with lessons/.
func hasLessonsRepo(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return false
	}
	fi, err := os.Stat(filepath.Join(dir, LessonsDir))
	return err == nil && fi.IsDir()
}

// marked reports whether dir's .gitattributes carries borg's line, or
// dir has this machine's node id.
func marked(dir string) bool {
	if fi, err := os.Lstat(filepath.Join(dir, nodeFile)); err == nil && fi.Mode().IsRegular() {
		return true
	}
	return attributesMarked(dir)
}

// attributesMarked reports whether dir's .gitattributes carries borg's
// line.
func attributesMarked(dir string) bool {
	data, err := os.ReadFile(filepath.Join(dir, ".gitattributes"))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if borgAttributeLine(l) {
			return true
		}
	}
	return false
}

// borgAttributeLine reports whether l is borg's line of a store's
// .gitattributes: how the outcome logs merge, as a union of lines
// (log/*.jsonl merge=union, what borg init writes) or by borg's merge
// driver (log/*.jsonl merge=borg-outcomes, for a team that declares it).
func borgAttributeLine(l string) bool {
	switch strings.Join(strings.Fields(l), " ") {
	case strings.TrimSpace(gitattributes), LogDir + "/*.jsonl merge=borg-outcomes":
		return true
	}
	return false
}

// ErrNoStoreDir: no store directory was given and there is no default
// (HOME and XDG_DATA_HOME unset or relative).
var ErrNoStoreDir = errors.New("no store directory")

// noStoreDir is the error of Open or Init given no directory.
func noStoreDir() error {
	return fmt.Errorf("%w: HOME and XDG_DATA_HOME are unset (or not absolute paths), so there is no default store; set BORG_STORE or pass --store DIR", ErrNoStoreDir)
}

// Open opens the store in dir. When dir holds no store the error wraps
// ErrNotStore and says how to make one.
func Open(dir string, opts ...Option) (*Store, error) {
	if dir == "" {
		return nil, fmt.Errorf("open store: %w", noStoreDir())
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	if hasLessonsRepo(abs) && !marked(abs) {
		return nil, fmt.Errorf("open store %s: %w: it is a git repository with a lessons/ folder but without borg's mark (the line %q in its .gitattributes), so borg takes it for a project, not a store; if it is a store, add the line and commit it", dir, ErrNotStore, strings.TrimSpace(gitattributes))
	}
	if !isStore(abs) {
		if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
			return nil, fmt.Errorf("open store %s: %w: it is a file, not a directory (name the store's directory with --store or BORG_STORE)", dir, ErrNotStore)
		}
		if _, err := os.Stat(filepath.Join(abs, ".git")); err == nil && marked(abs) {
			// A store whose lessons/ went (deleted by hand, or a checkout
			// that failed): git still holds every committed lesson, and
			// borg init refuses the directory, so say how to get it back.
			if fi, err := os.Lstat(filepath.Join(abs, LessonsDir)); err == nil && !fi.IsDir() {
				return nil, fmt.Errorf("open store %s: %w: %s is not a directory: move it away, then restore the lessons as the store's last commit holds them: git -C %s checkout HEAD -- %s", dir, ErrNotStore, LessonsDir, dir, LessonsDir)
			}
			return nil, fmt.Errorf("open store %s: %w: its %s folder is missing: restore the lessons as the store's last commit holds them: git -C %s checkout HEAD -- %s", dir, ErrNotStore, LessonsDir, dir, LessonsDir)
		}
		return nil, fmt.Errorf("open store %s: %w (create one with: borg init --store %s)", dir, ErrNotStore, dir)
	}
	if err := checkStoreDirs(abs); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	guardPrivate(abs)
	g, err := openGit(abs)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	return newStore(abs, g, opts), nil
}

// storeDirs are the directories borg reads and writes inside a store.
var storeDirs = []string{LessonsDir, ArchiveDir, LogDir, PrivateDir, localLogDir, PrivateDir + "/cache", PrivateDir + "/index", PrivateDir + "/sessions"}

// checkStoreDirs refuses a store whose own directories are symbolic links
// (or not directories): a teammate's commit could otherwise make borg read
// lessons from, append events to, or keep its private state in a place
// outside the store.
func checkStoreDirs(root string) error {
	for _, d := range storeDirs {
		p := filepath.Join(root, filepath.FromSlash(d))
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			if strings.HasPrefix(d, PrivateDir) {
				// .borg/ is never committed (its .gitignore says *): there
				// is no removal to commit.
				fix := "remove it (derived state: the next command rebuilds it)"
				switch d {
				case PrivateDir:
					fix = "move it away and restore the directory (it holds this machine's node id and local log; the rest is rebuilt)"
				case localLogDir:
					fix = "move it away and restore the directory (this machine's local log)"
				case PrivateDir + "/sessions":
					fix = "remove it (the agents' session state between hook calls: a session under way starts over)"
				}
				return fmt.Errorf("%s is not a directory (a symbolic link or a file; borg keeps everything inside the store): %s", d, fix)
			}
			return fmt.Errorf("%s is not a directory (a symbolic link or a file; borg keeps everything inside the store): remove it and commit the removal, or restore the directory", d)
		}
	}
	return nil
}

// Dir is the store's root directory.
func (s *Store) Dir() string { return s.dir }

// Node returns this machine's node id (the name of its log file), creating
// it in .borg/node on first use.
func (s *Store) Node() (string, error) {
	if s.node != "" {
		return s.node, nil
	}
	p := filepath.Join(s.dir, nodeFile)
	data, err := os.ReadFile(p)
	if err == nil {
		if n := strings.TrimSpace(string(data)); nodePattern(n) {
			s.node = n
			return n, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read node id: %w", err)
	}
	if err := s.checkOwner(); err != nil {
		return "", err
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	n := "n-" + hex.EncodeToString(b[:])
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	// Created with its content at once (linkNew): when two processes race
	// to create the id, one wins and the other reads the winner's, and a
	// kill never leaves an empty id behind.
	err = linkNew(filepath.Dir(p), p, []byte(n+"\n"))
	if errors.Is(err, os.ErrExist) {
		s.node = ""
		data, err := os.ReadFile(p)
		if err == nil && strings.TrimSpace(string(data)) == "" {
			// An empty id (a truncated file, a full disk) names no log:
			// a new one replaces it, and whichever id the file holds after
			// the race is the node's.
			if err := WriteFileAtomic(p, []byte(n+"\n"), 0o644); err != nil {
				if r := writeRefusal(s.dir, "write node id "+p, err); r != nil {
					return "", r
				}
				return "", fmt.Errorf("write node id %s: %w (remove the file to make a new one)", p, err)
			}
			data, err = os.ReadFile(p)
		}
		if err != nil || !nodePattern(strings.TrimSpace(string(data))) {
			return "", fmt.Errorf("read node id %s: it holds no node id (%q is not one): remove it and borg makes a new one", p, strings.TrimSpace(string(data)))
		}
		s.node = strings.TrimSpace(string(data))
		return s.node, nil
	}
	if err != nil {
		return "", fmt.Errorf("write node id: %w", err)
	}
	guardPrivate(s.dir)
	s.node = n
	return n, nil
}

func nodePattern(n string) bool {
	if len(n) < 3 || len(n) > 40 {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Lessons reads every lessons/*.html, sorted by id. A file that cannot be
// read or parsed yields an error naming it (a *domain.InvalidMemory with its
// Path set when the file breaks the format); the others still load. A
// lesson written without a created date has the time its file was first
// committed (FirstAdded), the format's default.
func (s *Store) Lessons() ([]domain.Lesson, []error) {
	lessons, errs := s.lessonsAsWritten()
	s.defaultCreated(lessons)
	return lessons, errs
}

// lessonsAsWritten is Lessons without the default created date: what the
// files say, without a walk of the history.
func (s *Store) lessonsAsWritten() ([]domain.Lesson, []error) {
	files, stray, err := s.lessonFiles()
	if err != nil {
		return nil, []error{err}
	}
	ids := make([]string, len(files))
	for i, f := range files {
		ids[i] = f.ID
	}
	lessons, errs := s.ReadLessons(ids)
	for _, f := range stray {
		errs = append(errs, &domain.InvalidMemory{Path: f.rel, Reason: f.reason})
	}
	sort.SliceStable(errs, func(i, j int) bool { return errPath(errs[i]) < errPath(errs[j]) })
	return lessons, errs
}

// errPath is the file an error of Lessons names ("" for none).
func errPath(err error) string {
	var im *domain.InvalidMemory
	if errors.As(err, &im) {
		return im.Path
	}
	return ""
}

// LessonFile is a file of lessons/ as a directory listing gives it: the id
// its name claims, where it is, and what tells whether it changed, without
// reading it.
type LessonFile struct {
	ID      string
	Path    string // slash path from the store's root (layout.go)
	ModTime int64  // Unix nanoseconds
	Size    int64
}

// LessonFiles lists the lesson files of lessons/ in id order without
// reading them (an index uses it to re-read only those that changed): each
// lesson's file in its bucket, else its file in the flat layout.
func (s *Store) LessonFiles() ([]LessonFile, error) {
	out, _, err := s.lessonFiles()
	return out, err
}

// LessonFilesStray is LessonFiles with how many .html files of lessons/ it
// leaves out (a name that is no lesson id, a lesson outside its bucket, a
// symlink): the files Lessons reports as invalid without reading them.
func (s *Store) LessonFilesStray() ([]LessonFile, int, error) {
	out, stray, err := s.lessonFiles()
	return out, len(stray), err
}

// lessonFiles is LessonFiles with the .html files it leaves out.
func (s *Store) lessonFiles() ([]LessonFile, []strayFile, error) {
	found, stray, err := s.scanLessonDir(LessonsDir)
	if err != nil {
		return nil, nil, err
	}
	out := make([]LessonFile, 0, len(found))
	for _, e := range found {
		if len(out) > 0 && out[len(out)-1].ID == e.id {
			continue // a flat copy behind its bucketed file
		}
		f := LessonFile{ID: e.id, Path: e.rel}
		if e.info != nil {
			f.ModTime, f.Size = e.info.ModTime().UnixNano(), e.info.Size()
		}
		out = append(out, f)
	}
	return out, stray, nil
}

// ReadLessons reads the lesson file of each id, in the order given; the
// files that cannot be read or are invalid are left out and reported in
// errs (as Lessons does). A lesson written without a created date keeps
// none here: ReadLessons is the index's read, on a hook's path, where a
// walk of the store's history (FirstAdded) costs too much; Lessons and
// Lesson give the format's default.
func (s *Store) ReadLessons(ids []string) ([]domain.Lesson, []error) {
	// Parsing is CPU-bound: spread the files over the processors, keeping
	// the results in order.
	lessons := make([]domain.Lesson, len(ids))
	errs := make([]error, len(ids))
	_ = perCore(len(ids), func() func(int) error {
		return func(i int) error {
			lessons[i], errs[i] = s.readLesson(LessonsDir, ids[i])
			return nil
		}
	})
	var out []domain.Lesson
	var bad []error
	for i := range ids {
		if errs[i] != nil {
			bad = append(bad, errs[i])
			continue
		}
		out = append(out, lessons[i])
	}
	return out, bad
}

// Lesson reads the lesson with this id: its file in its bucket, else the
// flat layout's lessons/<id>.html. A missing lesson is an error wrapping
// ErrNotFound; a bad id or file a *domain.InvalidMemory.
func (s *Store) Lesson(id string) (domain.Lesson, error) {
	if !domain.ValidID(id) {
		return domain.Lesson{}, &domain.InvalidMemory{Path: id, Reason: fmt.Sprintf("bad id %q (want ^[a-z][a-z0-9-]{2,63}$)", id)}
	}
	l, err := s.readLesson(LessonsDir, id)
	if err != nil {
		return l, err
	}
	ls := []domain.Lesson{l}
	s.defaultCreated(ls)
	return ls[0], nil
}

// ArchivedLesson reads the lesson a sleep moved to archive/ (ErrNotFound
// when there is none), with Lesson's checks.
func (s *Store) ArchivedLesson(id string) (domain.Lesson, error) {
	return s.readLesson(ArchiveDir, id)
}

func (s *Store) readLesson(dir, id string) (domain.Lesson, error) {
	if !domain.ValidID(id) {
		return domain.Lesson{}, &domain.InvalidMemory{Path: flatPath(dir, id), Reason: "file name is not a lesson id (want ^[a-z][a-z0-9-]{2,63}$.html)"}
	}
	rel, fi, err := s.locate(dir, id)
	if errors.Is(err, os.ErrNotExist) {
		return domain.Lesson{}, fmt.Errorf("read lesson %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return domain.Lesson{}, fmt.Errorf("read lesson %s: %w", id, err)
	}
	p := filepath.Join(s.dir, filepath.FromSlash(rel))
	if !fi.Mode().IsRegular() {
		return domain.Lesson{}, &domain.InvalidMemory{Path: rel, Reason: "not a regular file (symlinks are refused)"}
	}
	if fi.Size() > MaxLessonBytes {
		return domain.Lesson{}, &domain.InvalidMemory{Path: rel, Reason: fmt.Sprintf("file larger than %d bytes", MaxLessonBytes)}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return domain.Lesson{}, fmt.Errorf("read lesson %s: %w", id, err)
	}
	l, err := Parse(data)
	if err != nil {
		var im *domain.InvalidMemory
		if errors.As(err, &im) {
			return domain.Lesson{}, &domain.InvalidMemory{Path: rel, Reason: im.Reason}
		}
		return domain.Lesson{}, err
	}
	if l.ID != id {
		return domain.Lesson{}, &domain.InvalidMemory{Path: rel, Reason: fmt.Sprintf("memhtml-id %q does not match the file name: rename the file to %s/%s/%s.html, or set memhtml-id to %q", l.ID, dir, Bucket(l.ID), l.ID, id)}
	}
	return l, nil
}

// WriteLesson validates l and writes LessonPath(l.ID) atomically (a temp
// file, fsync, rename), so a killed process leaves the old file or the new
// one, never a torn one. It refuses a bad lesson (*domain.InvalidMemory) and
// a symlink in the lesson's place. It does not commit.
func (s *Store) WriteLesson(l domain.Lesson) error {
	if err := Validate(l); err != nil {
		return fmt.Errorf("write lesson %s: %w", l.ID, err)
	}
	l = canonical(l)
	p := filepath.Join(s.dir, filepath.FromSlash(LessonPath(l.ID)))
	if err := s.makeBucket(filepath.Dir(p)); err != nil {
		return fmt.Errorf("write lesson %s: %w", l.ID, err)
	}
	if err := checkNotLink(filepath.Dir(p), p); err != nil {
		return fmt.Errorf("write lesson %s: %w", l.ID, err)
	}
	data := Render(l)
	if len(data) > MaxLessonBytes {
		// Written, it could never be read again (Parse refuses it).
		return fmt.Errorf("write lesson %s: %w", l.ID, invalid("the lesson is %d bytes as a file, over the %d a lesson may hold: shorten the body, or keep the detail in a file of the repository and anchor it", len(data), MaxLessonBytes))
	}
	if err := writeAtomic(s, p, data); err != nil {
		return fmt.Errorf("write lesson %s: %w", l.ID, err)
	}
	return nil
}

// checkNotLink refuses a directory that is not a real directory and a file
// that exists as anything but a regular file.
func checkNotLink(dir, file string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (symlinks are refused)", dir)
	}
	fi, err = os.Lstat(file)
	if err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (symlinks are refused)", file)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// archive moves a lesson's file (in its bucket or the flat layout) to
// ArchivePath(id), replacing an older archived copy; history keeps every
// version. It does not commit. Sleep archives on its own ref instead (a
// Delete and a write in one CommitOnRef); tests use this to lay out an
// archived lesson in a worktree.
func (s *Store) archive(id string) error {
	if !domain.ValidID(id) {
		return fmt.Errorf("archive lesson %s: bad id", id)
	}
	from, _, err := s.locate(LessonsDir, id)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("archive lesson %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("archive lesson %s: %w", id, err)
	}
	to := filepath.Join(s.dir, filepath.FromSlash(ArchivePath(id)))
	if err := os.MkdirAll(filepath.Join(s.dir, ArchiveDir), 0o755); err != nil {
		return fmt.Errorf("archive lesson %s: %w", id, err)
	}
	if err := checkNotLink(filepath.Dir(to), to); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("archive lesson %s: %w", id, err)
	}
	_ = os.Remove(to) // an older archived copy
	if err := s.moveFile(from, ArchivePath(id)); err != nil {
		return fmt.Errorf("archive lesson %s: %w", id, err)
	}
	return nil
}

// writeAtomic writes data to p with WriteFileAtomic, its temp file in
// .borg/tmp (so that lessons/ never holds a stray temp file;
// sweepStaleTemps removes what a killed writer left there).
func writeAtomic(s *Store, p string, data []byte) error {
	return writeAtomicFunc(s, p, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// writeAtomicFunc is writeAtomic of what fill writes to the temp file.
func writeAtomicFunc(s *Store, p string, fill func(*os.File) error) error {
	tmp := filepath.Join(s.dir, tmpDir)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	return fsutil.WriteFileAtomicFunc(p, 0o644, fill, fsutil.TempDir(tmp))
}
