package memfs

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// ErrForeignStore: the store belongs to another user, and borg does not
// write it.
var ErrForeignStore = errors.New("the store belongs to another user")

// ownerCheck caches checkOwner's verdict for one store.
type ownerCheck struct {
	once sync.Once
	err  error
}

// checkOwner refuses to write a store another user owns, as git refuses a
// repository another user owns (safe.directory): the files a write makes
// would belong to this user (root running a hook in someone's store, say),
// and the owner could no longer write them. A store named in git's
// safe.directory (the user's or the system's git config; "*" names all)
// is written all the same. Reading another user's store needs no check.
func (s *Store) checkOwner() error {
	s.owner.once.Do(func() {
		owner, me, foreign := storeOwner(s.dir)
		if !foreign || safeDirectory(s.dir) {
			return
		}
		s.owner.err = fmt.Errorf("this user cannot write the store %s: %w (it belongs to uid %d, and this is uid %d); borg writes no other user's store, since the files it made would lock its owner out. Run the command as the store's owner (reading commands work as they are), or, to allow it, add the store to git's safe.directory: git config --global --add safe.directory %s",
			s.dir, ErrForeignStore, owner, me, s.dir)
	})
	return s.owner.err
}

// safeDirectory reports whether git's protected configuration (global and
// system; a repository's own config cannot vouch for itself) lists dir
// in safe.directory.
func safeDirectory(dir string) bool {
	out, err := Git{Dir: string(filepath.Separator), Isolate: true, Env: []string{"LC_ALL=C"}}.Run(context.Background(), nil, "config", "--get-all", "safe.directory")
	if err != nil {
		return false
	}
	for _, v := range strings.Split(string(out), "\n") {
		v = strings.TrimSpace(v)
		if v == "*" || v != "" && filepath.Clean(v) == filepath.Clean(dir) {
			return true
		}
	}
	return false
}
