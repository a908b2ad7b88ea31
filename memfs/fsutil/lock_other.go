//go:build !unix && !windows

package fsutil

import "os"

// Where the system has no advisory file lock (neither unix nor windows),
// borg does not lock. What that costs: two processes appending to one log file still
// write each line in one O_APPEND write; two that write the index at once
// each replace whole files by rename, and the last one wins; two hooks of
// one session may each block a stop. Nothing is corrupted or lost.
func lockBlocking(*os.File) error { return nil }

func lockTry(*os.File) (bool, error) { return false, nil }

func lockRelease(*os.File) error { return nil }

func isInterrupted(error) bool { return false }

// lockSupported: LockFile excludes other holders on this system.
const lockSupported = false
