// Command borg is a git-native, team-shared memory for AI coding agents.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

func main() {
	stop := startProfile(os.Getenv("BORG_CPUPROFILE"))
	memStop := startMemProfile(os.Getenv("BORG_MEMPROFILE"))
	code := run(context.Background(), os.Args, newOSEnv())
	memStop()
	stop()
	os.Exit(code)
}

// startMemProfile records every allocation of this process's run when
// path is set (BORG_MEMPROFILE, a developer's switch beside
// BORG_CPUPROFILE: `go tool pprof -sample_index=alloc_space borg path`), and
// returns what writes the profile. A short-lived hook's heap is fresh
// memory, each page of it a fault, so what it allocates is what it pays.
func startMemProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	runtime.MemProfileRate = 1
	return func() {
		f, err := os.Create(path)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "borg: BORG_MEMPROFILE=%s: %v\n", path, err)
		}
	}
}

// startProfile writes a CPU profile of this process to path when it is set
// (BORG_CPUPROFILE, a developer's switch: `go tool pprof borg path`), and
// returns what ends it. A profile that cannot start says so on stderr and
// the command runs unprofiled.
func startProfile(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "borg: BORG_CPUPROFILE=%s: %v (running without a profile)\n", path, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
