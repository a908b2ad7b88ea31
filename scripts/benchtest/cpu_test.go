package benchtest

import (
	"runtime"
	"testing"
)

func TestProcessCPUAdvances(t *testing.T) {
	start, ok := ProcessCPU()
	if !ok {
		if runtime.GOOS != "windows" && runtime.GOOS != "plan9" {
			t.Fatal("no CPU time on a unix")
		}
		t.Skip("no CPU time on this OS")
	}
	x := 0
	for end := start; end == start; end, _ = ProcessCPU() {
		for i := range 1_000_000 {
			x += i
		}
	}
	_ = x
}
