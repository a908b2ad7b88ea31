package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportBoundaries holds each package to what it may depend on: domain
// and the leaf packages to the standard library alone (gitobj, borg's git
// object reader and writer, to it and fsutil); index and hooks to
// anything but the store package and what it pulls in (go-git, gitleaks),
// which every hook would otherwise pay for; and borg itself to anything but
// the MCP SDK, which only borg-mcp links (its initialisers, and those of
// what it brings, would run at the start of every borg process).
func TestImportBoundaries(t *testing.T) {
	const mod = "github.com/borg-memory/borg/"
	stdlibOnly := func(dep string, standard bool) bool { return standard }
	stdlibAndFsutil := func(dep string, standard bool) bool { return standard || dep == mod+"memfs/fsutil" }
	noStore := func(dep string, _ bool) bool {
		return dep != mod+"memfs" && !strings.Contains(dep, "go-git") && !strings.Contains(dep, "gitleaks")
	}
	noMCP := func(dep string, _ bool) bool { return !strings.Contains(dep, "modelcontextprotocol") }
	tests := []struct {
		pkg     string
		allowed func(dep string, standard bool) bool
	}{
		{"domain", stdlibOnly},
		{"memfs/fsutil", stdlibOnly},
		{"memfs/fsutil/tmpfstest", stdlibOnly},
		{"memfs/gitcli", stdlibOnly},
		{"memfs/gitobj", stdlibAndFsutil},
		{"index", noStore},
		{"hooks", noStore},
		{"cmd/borg", noMCP},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "./"+tt.pkg)
			cmd.Dir, cmd.Env = repoRoot, goEnv()
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				dep, std, _ := strings.Cut(line, " ")
				if dep != mod+tt.pkg && !tt.allowed(dep, std == "true") {
					t.Errorf("%s depends on %s", tt.pkg, dep)
				}
			}
		})
	}
}
