package memfs

import (
	"errors"
	"io/fs"
	"syscall"
)

// ReadOnly reports whether err says a path cannot be written by this
// process: permission denied (another user's store) or a read-only file
// system. Commands that only read (recall, a hook's search) go on in
// memory when the store's derived state cannot be saved.
func ReadOnly(err error) bool {
	return err != nil && (errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS))
}
