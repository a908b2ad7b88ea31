//go:build !unix

package index

import "time"

// lockDir does not lock where flock is not available: two processes that
// sync at once each write whole files by rename, and the last one wins.
func lockDir(path string, wait time.Duration) (func(), error) { return func() {}, nil }
