package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteOption changes how WriteFileAtomic writes.
type WriteOption func(*writeOptions)

type writeOptions struct {
	tmpDir string
	noSync bool
}

// TempDir puts WriteFileAtomic's temporary file in dir (on the same file
// system as the target) instead of beside the target.
func TempDir(dir string) WriteOption { return func(o *writeOptions) { o.tmpDir = dir } }

// NoSync skips the fsyncs: a killed process still leaves the old file or
// the new one (the rename is atomic), but a power loss may leave neither.
// It is for files git itself writes without fsync and that borg can
// rebuild: the git index (doctor's ResetIndex) and loose objects of a
// commit whose ref is not yet moved.
func NoSync() WriteOption { return func(o *writeOptions) { o.noSync = true } }

// WriteFileAtomic writes data to path so that a reader sees the old file or
// the new one, never part of one, and a crash leaves one of the two: a
// temporary file beside path (or in TempDir), synced, renamed over path,
// and the directory synced. It is borg's one atomic write.
func WriteFileAtomic(path string, data []byte, perm os.FileMode, opts ...WriteOption) error {
	return WriteFileAtomicFunc(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	}, opts...)
}

// WriteFileAtomicFunc is WriteFileAtomic for a file written by fill (at
// offsets, from several goroutines, as it likes) instead of from one
// buffer: the index streams its 300 MB vector sidecar this way.
func WriteFileAtomicFunc(path string, perm os.FileMode, fill func(*os.File) error, opts ...WriteOption) error {
	o := writeOptions{tmpDir: filepath.Dir(path)}
	for _, opt := range opts {
		opt(&o)
	}
	if err := writeVia(o, path, perm, fill); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeVia(o writeOptions, p string, perm os.FileMode, fill func(*os.File) error) error {
	f, err := os.CreateTemp(o.tmpDir, "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	name := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(name)
		}
	}()
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := fill(f); err != nil {
		return err
	}
	if !o.noSync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, p); err != nil {
		return err
	}
	ok = true
	if o.noSync {
		return nil
	}
	return SyncDir(filepath.Dir(p))
}

// SyncDir fsyncs a directory so a rename in it is durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = d.Close() }()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// ReadOnly reports whether err says a path cannot be written by this
// process: permission denied (another user's store) or a read-only file
// system. Commands that only read (recall, a hook's search) go on in
// memory when the store's derived state cannot be saved.
func ReadOnly(err error) bool {
	return err != nil && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS))
}

// DiskFull reports whether err says the disk (or the user's quota) has no
// room left.
func DiskFull(err error) bool {
	return err != nil && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT))
}
