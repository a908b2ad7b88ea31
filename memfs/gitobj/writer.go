package gitobj

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/borg-memory/borg/memfs/fsutil"
)

// Writer collects the objects of one commit and writes them at Flush: as
// loose objects, or as one pack when there are many (a pack of thousands
// of lessons is one file to write instead of thousands). It is not safe
// for concurrent use.
type Writer struct {
	o    *Objects
	read func(t Type, id [20]byte) ([]byte, error)
	objs []object
	seen map[[20]byte]bool
}

// NewWriter is a Writer into o. read reads the trees WriteTree edits:
// o.Read, with whatever the caller does about an object o does not find.
func (o *Objects) NewWriter(read func(t Type, id [20]byte) ([]byte, error)) *Writer {
	return &Writer{o: o, read: read, seen: map[[20]byte]bool{}}
}

// Add queues an object and returns its id.
func (w *Writer) Add(t Type, data []byte) [20]byte {
	id := Hash(t, data)
	if !w.seen[id] {
		w.seen[id] = true
		w.objs = append(w.objs, object{typ: t, data: data, id: id})
	}
	return id
}

// Flush writes the queued objects and reports whether it wrote them as a
// pack (a reader that lists the packs once must list them again). Objects
// already present are left as they are.
func (w *Writer) Flush() (packed bool, err error) {
	if len(w.objs) >= PackAtLeast {
		// Only the objects the store lacks: a commit that moves or
		// re-adds many files (doctor --fix's move into the buckets)
		// would otherwise pack every blob a second time.
		kept := w.objs[:0]
		for _, o := range w.objs {
			if !w.o.freshen(o.id) {
				kept = append(kept, o)
			}
		}
		w.objs = kept
	}
	if len(w.objs) >= PackAtLeast {
		if err := w.writePack(); err != nil {
			return false, err
		}
		return true, nil
	}
	for _, o := range w.objs {
		p := w.o.LoosePath(o.id)
		if fileExists(p) {
			now := time.Now()
			_ = os.Chtimes(p, now, now) // freshen: see Objects.freshen
			continue
		}
		data, err := looseObject(o.typ, o.data)
		if err != nil {
			return false, fmt.Errorf("write %s %x: %w", o.typ, o.id, err)
		}
		if err := w.writeLoose(p, data); err != nil {
			return false, fmt.Errorf("write %s %x: %w", o.typ, o.id, err)
		}
	}
	w.objs = w.objs[:0]
	return false, nil
}

// writeLoose writes a loose object's file. A git gc running beside borg
// (housekeeping starts one in the background) removes the fan-out
// directories it empties, so the directory made for the object may be gone
// when the file is renamed into it: then it is made again and the write
// retried.
func (w *Writer) writeLoose(p string, data []byte) error {
	for attempt := 1; ; attempt++ {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if looseDirHook != nil {
			looseDirHook(filepath.Dir(p))
		}
		// Unsynced, as go-git and git (by default) write loose objects:
		// the ref that makes them reachable moves after, synced.
		err := fsutil.WriteFileAtomic(p, data, 0o444, fsutil.TempDir(w.o.dir), fsutil.NoSync())
		if err == nil || !errors.Is(err, fs.ErrNotExist) || attempt == looseAttempts {
			return err
		}
	}
}

// looseAttempts bounds writeLoose's retries: a gc prunes each directory
// once.
const looseAttempts = 8

// looseDirHook, when set (by a test), runs between making an object's
// directory and writing into it: where a concurrent gc removes it.
var looseDirHook func(dir string)

// writePack writes the queued objects as one pack and its index (the
// pack first: git uses a pack once its index is there).
func (w *Writer) writePack() error {
	pack, idx, sum, err := encodePack(w.objs)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	dir := filepath.Join(w.o.dir, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	base := filepath.Join(dir, fmt.Sprintf("pack-%x", sum))
	if err := fsutil.WriteFileAtomic(base+".pack", pack, 0o444); err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(base+".idx", idx, 0o444); err != nil {
		return err
	}
	w.objs = w.objs[:0]
	return nil
}
