// Command borg is a git-native, team-shared memory for AI coding agents.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
)

func main() {
	stop := startProfile(os.Getenv("BORG_CPUPROFILE"))
	code := run(context.Background(), os.Args, newOSEnv())
	stop()
	os.Exit(code)
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
