package memfs

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/fsutil"
)

// The fan-out layout: lessons/<bucket>/<id>.html, archive/<bucket>/<id>.html.
//
// git stores a directory as one tree object listing every entry, and a
// commit rewrites each tree on a changed file's path whole. In a flat
// lessons/ of 100,000 lessons that tree is 5 MB, so every learn wrote (and
// hashed, and left loose) 5 MB for a file of 2 KB. Spread over 256 buckets
// a commit rewrites a root tree, a lessons/ tree of 256 entries and one
// bucket of about 400: some 30 KB at 100,000 lessons.
//
// A lesson's bucket is the first two hex digits of the SHA-1 of its id
// (`printf %s ID | sha1sum | cut -c1-2`), so it never moves and buckets
// fill evenly whatever the ids look like. The flat layout of earlier
// stores, lessons/<id>.html, is still read; borg doctor reports such files
// and borg doctor --fix moves them into their buckets (MigrateLayout).

// Bucket is the subdirectory of lessons/ and archive/ that holds the lesson
// with this id.
func Bucket(id string) string {
	sum := sha1.Sum([]byte(id))
	return hex.EncodeToString(sum[:1])
}

// LessonPath is the slash path of a lesson file from the store's root:
// lessons/<bucket>/<id>.html.
func LessonPath(id string) string { return LessonsDir + "/" + Bucket(id) + "/" + id + ".html" }

// ArchivePath is the slash path of an archived lesson file:
// archive/<bucket>/<id>.html.
func ArchivePath(id string) string { return ArchiveDir + "/" + Bucket(id) + "/" + id + ".html" }

// flatPath is where the flat layout kept a lesson of dir (LessonsDir or
// ArchiveDir).
func flatPath(dir, id string) string { return dir + "/" + id + ".html" }

// isBucketName reports whether name could be a bucket: two lowercase hex
// digits.
func isBucketName(name string) bool {
	return len(name) == 2 && isLowerHex(name[0]) && isLowerHex(name[1])
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// ParseLessonPath reads the slash path of a lesson file: dir is LessonsDir
// or ArchiveDir, id the lesson's, and flat tells the flat layout's
// dir/<id>.html from dir/<bucket>/<id>.html. ok is false for anything else,
// a lesson file in another lesson's bucket included (LessonFiles does not
// read those; borg doctor --fix moves them).
func ParseLessonPath(p string) (dir, id string, flat, ok bool) {
	dir, rest, found := strings.Cut(p, "/")
	if !found || dir != LessonsDir && dir != ArchiveDir {
		return "", "", false, false
	}
	bucket, name, nested := strings.Cut(rest, "/")
	if !nested {
		name, bucket = rest, ""
	}
	id, isHTML := strings.CutSuffix(name, ".html")
	if !isHTML || !domain.ValidID(id) || nested && bucket != Bucket(id) {
		return "", "", false, false
	}
	return dir, id, !nested, true
}

// locate finds the file of lesson id (a valid id) in dir (LessonsDir or
// ArchiveDir): in its bucket, else in the flat layout. It returns the
// file's slash path and its Lstat, an error wrapping os.ErrNotExist when
// neither holds it, and a *domain.InvalidMemory when the bucket is not a
// real directory (a committed symlink there would have borg read files
// from outside the store).
func (s *Store) locate(dir, id string) (string, os.FileInfo, error) {
	bucket := dir + "/" + Bucket(id)
	fi, err := os.Lstat(filepath.Join(s.dir, filepath.FromSlash(bucket)))
	if err == nil && !fi.IsDir() {
		return "", nil, &domain.InvalidMemory{Path: bucket, Reason: "the bucket is not a directory (symlinks are refused)"}
	}
	rel := bucket + "/" + id + ".html"
	if err == nil {
		fi, err = os.Lstat(filepath.Join(s.dir, filepath.FromSlash(rel)))
	}
	if errors.Is(err, os.ErrNotExist) {
		rel = flatPath(dir, id)
		fi, err = os.Lstat(filepath.Join(s.dir, filepath.FromSlash(rel)))
	}
	if err != nil {
		return "", nil, err
	}
	return rel, fi, nil
}

// StatLesson is the LessonFile of lesson id as LessonFiles would list it
// (its bucket's file, else the flat layout's), without listing lessons/;
// an error wrapping ErrNotFound when there is none.
func (s *Store) StatLesson(id string) (LessonFile, error) {
	if !domain.ValidID(id) {
		return LessonFile{}, &domain.InvalidMemory{Path: id, Reason: "bad lesson id"}
	}
	rel, fi, err := s.locate(LessonsDir, id)
	if errors.Is(err, os.ErrNotExist) {
		return LessonFile{}, fmt.Errorf("stat lesson %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return LessonFile{}, fmt.Errorf("stat lesson %s: %w", id, err)
	}
	return LessonFile{ID: id, Path: rel, ModTime: fi.ModTime().UnixNano(), Size: fi.Size()}, nil
}

// lessonEntry is one lesson file found on disk.
type lessonEntry struct {
	id   string
	rel  string // slash path from the store's root
	flat bool
	info os.FileInfo
}

// strayFile is a .html file of lessons/ or archive/ that is not read as a
// lesson, and why.
type strayFile struct {
	rel     string
	regular bool
	reason  string
}

// scanLessonDir lists the lesson files of dir (LessonsDir or ArchiveDir)
// on disk: those in their buckets and those of the flat layout, sorted by
// id then path, a flat copy after its bucketed one. The .html files that
// are not read as lessons (a name that is no lesson id, a lesson in another
// lesson's bucket, a symlink) go to stray with the reason. A missing dir
// lists nothing.
func (s *Store) scanLessonDir(dir string) (found []lessonEntry, stray []strayFile, err error) {
	root := filepath.Join(s.dir, dir)
	top, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", dir, err)
	}
	add := func(e os.DirEntry, rel string) {
		_, id, flat, ok := ParseLessonPath(rel)
		switch {
		case !e.Type().IsRegular():
			stray = append(stray, strayFile{rel: rel, reason: "not a regular file (symlinks are refused)"})
		case ok:
			info, _ := e.Info()
			found = append(found, lessonEntry{id: id, rel: rel, flat: flat, info: info})
		default:
			_, claimed, _ := strayID(rel)
			reason := "file name is not a lesson id (want ^[a-z][a-z0-9-]{2,63}$.html)"
			if domain.ValidID(claimed) {
				// A file that is no lesson is not moved: say what is wrong
				// with it first (strays are few; each is read once). A
				// lesson is moved to its memhtml-id's place, whatever
				// its file is named.
				id, perr := s.strayLessonID(rel)
				switch {
				case perr != nil:
					reason = fmt.Sprintf("not a lesson (%v) and not in its bucket: make it a valid lesson (docs/formats.md), and borg doctor --fix moves it to %s/%s/%s.html", perr, dir, Bucket(claimed), claimed)
				case id != claimed:
					reason = fmt.Sprintf("not in its place: it holds lesson %s (its memhtml-id), which belongs at %s/%s/%s.html (borg doctor --fix moves it)", id, dir, Bucket(id), id)
				default:
					reason = fmt.Sprintf("not in its bucket: lesson %s belongs at %s/%s/%s.html (borg doctor --fix moves it)", id, dir, Bucket(id), id)
				}
			}
			stray = append(stray, strayFile{rel: rel, regular: true, reason: reason})
		}
	}
	for _, e := range top {
		name := e.Name()
		switch {
		case e.IsDir() && isBucketName(name):
			sub, err := os.ReadDir(filepath.Join(root, name))
			if err != nil {
				return nil, nil, fmt.Errorf("read %s/%s: %w", dir, name, err)
			}
			for _, f := range sub {
				if strings.HasSuffix(f.Name(), ".html") {
					add(f, dir+"/"+name+"/"+f.Name())
				}
			}
		case e.IsDir():
			// A folder of the user's (lessons/team-notes/): its lesson
			// files are not read where they are; doctor names them and
			// --fix moves them into their buckets.
			err := filepath.WalkDir(filepath.Join(root, name), func(p string, f os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !f.IsDir() && strings.HasSuffix(f.Name(), ".html") {
					rel, rerr := filepath.Rel(s.dir, p)
					if rerr != nil {
						return rerr
					}
					add(f, filepath.ToSlash(rel))
				}
				return nil
			})
			if err != nil {
				return nil, nil, fmt.Errorf("read %s/%s: %w", dir, name, err)
			}
		case !e.IsDir() && !e.Type().IsRegular() && isBucketName(name):
			// A committed symlink in a bucket's place is never followed.
			stray = append(stray, strayFile{rel: dir + "/" + name, reason: "the bucket is not a directory (symlinks are refused)"})
		case strings.HasSuffix(name, ".html"):
			add(e, dir+"/"+name)
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].id != found[j].id {
			return found[i].id < found[j].id
		}
		return !found[i].flat && found[j].flat
	})
	sort.Slice(stray, func(i, j int) bool { return stray[i].rel < stray[j].rel })
	return found, stray, nil
}

// FlatLessonFiles counts the .html files directly in lessons/ and
// archive/ (the flat layout), without looking into the buckets.
func (s *Store) FlatLessonFiles() int {
	n := 0
	for _, dir := range []string{LessonsDir, ArchiveDir} {
		entries, _ := os.ReadDir(filepath.Join(s.dir, dir))
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".html") {
				n++
			}
		}
	}
	return n
}

// LayoutMove is a lesson file that is not where the fan-out layout puts it.
type LayoutMove struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Conflict says why the file cannot simply move: another file already
	// holds the lesson at To, with other bytes.
	Conflict string `json:"conflict,omitempty"`
}

// LayoutMoves lists the lesson files of lessons/ and archive/ kept in the
// flat layout (or in another lesson's bucket), each with the path it
// belongs at, sorted by From.
func (s *Store) LayoutMoves() ([]LayoutMove, error) {
	var out []LayoutMove
	for _, dir := range []string{LessonsDir, ArchiveDir} {
		found, stray, err := s.scanLessonDir(dir)
		if err != nil {
			return nil, err
		}
		placed := map[string]bool{}
		for _, f := range found {
			if !f.flat {
				placed[f.id] = true
			}
		}
		var from []string
		for _, f := range found {
			if f.flat {
				from = append(from, f.rel)
			}
		}
		for _, f := range stray {
			// A lesson id in the wrong bucket moves; anything else is
			// not a lesson file and stays for doctor to report.
			if _, id, _ := strayID(f.rel); f.regular && domain.ValidID(id) {
				from = append(from, f.rel)
			}
		}
		// Two files moving to one place (a flat file and a copy in another
		// lesson's bucket) are one move when they hold the same bytes, and
		// a conflict naming both when they do not: both stay.
		// Each file moves to the place of the lesson it holds (its
		// memhtml-id), which is not its name's when it was renamed by
		// hand: moved by its name, it would stay unread.
		target := make(map[string]string, len(from))
		bySource := map[string][]string{}
		for _, rel := range from {
			id, _ := s.strayLessonID(rel)
			target[rel] = id
			bySource[id] = append(bySource[id], rel)
		}
		read := func(rel string) (string, error) {
			b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
			return string(b), err
		}
		for _, rel := range from {
			id := target[rel]
			m := LayoutMove{From: rel, To: dir + "/" + Bucket(id) + "/" + id + ".html"}
			a, errA := read(m.From)
			if placed[id] {
				if b, errB := read(m.To); errA != nil || errB != nil || a != b {
					m.Conflict = fmt.Sprintf("%s also holds lesson %s, with other content: keep one of the two files and delete the other", m.To, id)
				}
			}
			for _, other := range bySource[id] {
				if m.Conflict != "" || other == rel {
					continue
				}
				if b, errB := read(other); errA != nil || errB != nil || a != b {
					m.Conflict = fmt.Sprintf("%s also holds lesson %s, with other content, and both belong at %s: keep one of the two files and delete the other (both are kept until then)", other, id, m.To)
				}
			}
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].From < out[j].From })
	return out, nil
}

// strayLessonID is the id of the lesson the store file rel holds: its
// memhtml-id when the file parses (a file renamed by hand keeps the id
// it was written with), else the id its name claims, with the parse's
// error. A read error is returned as is.
func (s *Store) strayLessonID(rel string) (string, error) {
	_, claimed, _ := strayID(rel)
	data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
	if err != nil {
		return claimed, err
	}
	l, err := Parse(data)
	if err != nil {
		return claimed, err
	}
	if !domain.ValidID(l.ID) {
		return claimed, nil
	}
	return l.ID, nil
}

// strayID is the id a lesson file's name claims: dir/<id>.html or
// dir/<anything>/<id>.html.
func strayID(rel string) (dir, id string, ok bool) {
	dir, rest, _ := strings.Cut(rel, "/")
	name := rest
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		name = rest[i+1:]
	}
	id, ok = strings.CutSuffix(name, ".html")
	return dir, id, ok
}

// MigrateLayout moves every lesson file LayoutMoves lists without a
// conflict to its bucket and commits the moves as one commit (git shows
// them as renames), returning the moves made, those left (the conflicts,
// which stay as they are) and the commit ("" when there was nothing to
// move). A file whose lesson already sits in its bucket with the same
// bytes is removed.
func (s *Store) MigrateLayout() (done, left []LayoutMove, commit string, err error) {
	moves, err := s.LayoutMoves()
	if err != nil {
		return nil, nil, "", err
	}
	// Only committed files move: one no commit holds stays for doctor's
	// own rule (it commits the valid ones; the move comes after).
	committed, err := s.committedLessonPaths()
	if err != nil {
		return nil, nil, "", err
	}
	var paths []string
	for _, m := range moves {
		if m.Conflict == "" && !committed[m.From] {
			m.Conflict = "no commit holds it: make it a valid lesson and commit it (borg doctor --fix commits a valid one), then it moves"
		}
		if m.Conflict != "" {
			left = append(left, m)
			continue
		}
		done = append(done, m)
		paths = append(paths, m.From, m.To)
	}
	if len(done) == 0 {
		return nil, left, "", nil
	}
	msg := fmt.Sprintf("borg: move %d lesson files into their buckets (lessons/<bucket>/<id>.html)", len(done))
	h, err := s.Update(msg, paths, func() error {
		// Each directory is synced once, after all the renames (a store
		// of 100,000 flat lessons would otherwise sync 200,000 times).
		dirs := map[string]bool{}
		for _, m := range done {
			if err := s.renameInto(m.From, m.To); err != nil {
				return err
			}
			dirs[path.Dir(m.From)], dirs[path.Dir(m.To)] = true, true
		}
		for d := range dirs {
			if err := fsutil.SyncDir(filepath.Join(s.dir, filepath.FromSlash(d))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, left, "", fmt.Errorf("migrate layout: %w", err)
	}
	return done, left, h, nil
}

// committedLessonPaths is the set of HEAD's files under lessons/ and
// archive/, as slash paths.
func (s *Store) committedLessonPaths() (map[string]bool, error) {
	committed := map[string]bool{}
	for _, dir := range []string{LessonsDir, ArchiveDir} {
		files, err := s.listAt("HEAD", dir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			committed[f] = true
		}
	}
	return committed, nil
}

// PlaceUncommitted moves each lesson file no commit holds that LayoutMoves
// lists without a conflict, that is not read where it is (written by hand
// into lessons/team-notes/ or another lesson's bucket, or named other
// than its id) and that parses as a lesson, to its place, and commits
// nothing: it is then an uncommitted lesson like any other, for doctor to
// check and screen before a commit (MigrateLayout moves only committed
// files, so it would never move). A file that is no lesson stays where it
// is, for doctor to name; one of the flat layout is read where it is, and
// moves once committed. It returns the moves made.
func (s *Store) PlaceUncommitted() ([]LayoutMove, error) {
	// The write lock, without finishing a dead writer's journal: that is
	// CheckLocks's to finish and report, and no borg write names a file
	// outside its place.
	if err := s.checkOwner(); err != nil {
		return nil, err
	}
	p := filepath.Join(s.dir, filepath.FromSlash(writeLockFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("place uncommitted lesson files: %w", err)
	}
	unlock, err := s.takeWriteLock(p, writeWait)
	if err != nil {
		return nil, fmt.Errorf("place uncommitted lesson files: take the store's write lock: %w", err)
	}
	defer unlock()
	moves, err := s.LayoutMoves()
	if err != nil {
		return nil, err
	}
	committed, err := s.committedLessonPaths()
	if err != nil {
		return nil, err
	}
	var done []LayoutMove
	for _, m := range moves {
		if dir, id, _, read := ParseLessonPath(m.From); m.Conflict != "" || committed[m.From] || read && m.To == dir+"/"+Bucket(id)+"/"+id+".html" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(m.From)))
		if err != nil {
			return done, fmt.Errorf("place uncommitted lesson files: %w", err)
		}
		if _, err := Parse(data); err != nil {
			continue
		}
		if err := s.moveFile(m.From, m.To); err != nil {
			return done, fmt.Errorf("place uncommitted lesson files: %w", err)
		}
		done = append(done, m)
	}
	return done, nil
}

// moveFile renames the store file from to to (slash paths) as renameInto
// does, and syncs both directories.
func (s *Store) moveFile(from, to string) error {
	if err := s.renameInto(from, to); err != nil {
		return err
	}
	if err := fsutil.SyncDir(filepath.Join(s.dir, filepath.FromSlash(path.Dir(to)))); err != nil {
		return err
	}
	return fsutil.SyncDir(filepath.Join(s.dir, filepath.FromSlash(path.Dir(from))))
}

// renameInto renames the store file from to to (slash paths), making to's
// directory, refusing links on either side; when to already exists with
// the same bytes from is removed, and with other bytes it is an error and
// both files stay. It syncs no directory.
func (s *Store) renameInto(from, to string) error {
	src := filepath.Join(s.dir, filepath.FromSlash(from))
	dst := filepath.Join(s.dir, filepath.FromSlash(to))
	if err := s.makeBucket(filepath.Dir(dst)); err != nil {
		return err
	}
	if err := checkNotLink(filepath.Dir(src), src); err != nil {
		return err
	}
	if _, err := os.Lstat(dst); err == nil {
		// Only a copy with the same bytes goes: a repair never drops text.
		a, errA := os.ReadFile(src)
		b, errB := os.ReadFile(dst)
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			return fmt.Errorf("%s and %s both hold lesson %s with other content: both are kept; keep one of the two files and delete the other", from, to, strings.TrimSuffix(path.Base(to), ".html"))
		}
		return os.Remove(src)
	}
	return os.Rename(src, dst)
}

// makeBucket makes a bucket directory when missing, refusing a bucket or
// a parent (lessons/, archive/) that exists as anything but a real
// directory.
func (s *Store) makeBucket(dir string) error {
	fi, err := os.Lstat(filepath.Dir(dir))
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (symlinks are refused)", filepath.Dir(dir))
	}
	fi, err = os.Lstat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s is not a directory (symlinks are refused)", dir)
	case err == nil:
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return fsutil.SyncDir(filepath.Dir(dir))
}
