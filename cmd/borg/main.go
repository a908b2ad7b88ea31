// Command borg is a git-native, team-shared memory for AI coding agents.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args, newOSEnv()))
}
