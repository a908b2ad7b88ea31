//go:build !unix

package sleep

import "time"

// processCPU is unavailable here; benchmarks then report wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
