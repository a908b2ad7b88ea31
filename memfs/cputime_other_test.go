//go:build !unix

package memfs

import "time"

// processCPU is not measured here: benchmarks report 0 cpu-ns/op.
func processCPU() time.Duration { return 0 }
