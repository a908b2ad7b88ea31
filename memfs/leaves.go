package memfs

import (
	"github.com/borg-memory/borg/memfs/fsutil"
	"github.com/borg-memory/borg/memfs/gitcli"
)

// The concerns every package needs (atomic writes, locks, the git runner)
// live in leaf packages that depend on nothing of the store: fsutil and
// gitcli. A package that needs only them (index, hooks) imports them and
// not the store with its git engine. These names are the same
// implementations, for the store's own code and its callers.

// Git runs the git CLI (gitcli.Git).
type Git = gitcli.Git

// GitError is a git command that failed (gitcli.GitError).
type GitError = gitcli.GitError

// WriteOption changes how WriteFileAtomic writes (fsutil.WriteOption).
type WriteOption = fsutil.WriteOption

var (
	// ErrLocked: the lock is held by another process (fsutil.ErrLocked).
	ErrLocked = fsutil.ErrLocked
	// LockFile, UnlockFile and LockPath take and release a file's
	// advisory lock (fsutil).
	LockFile   = fsutil.LockFile
	UnlockFile = fsutil.UnlockFile
	LockPath   = fsutil.LockPath
	// WriteFileAtomic and WriteFileAtomicFunc are borg's one atomic write,
	// with the options TempDir and NoSync (fsutil).
	WriteFileAtomic     = fsutil.WriteFileAtomic
	WriteFileAtomicFunc = fsutil.WriteFileAtomicFunc
	TempDir             = fsutil.TempDir
	NoSync              = fsutil.NoSync
	// ReadOnly and DiskFull read a write's error (fsutil).
	ReadOnly = fsutil.ReadOnly
	DiskFull = fsutil.DiskFull
	// IsObjectName reports a full git object name (gitcli.IsObjectName).
	IsObjectName = gitcli.IsObjectName
)
