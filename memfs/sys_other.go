//go:build !unix

package memfs

import (
	"os"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// flock is a no-op where flock(2) does not exist: appends still go out as
// one write per line with O_APPEND.
func flock(*os.File) error { return nil }

func funlock(*os.File) error { return nil }

func fillStat(*index.Entry, os.FileInfo) {}
