package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/memfs/fsutil"
)

// mcpServer is the binary that serves a store over the Model Context
// Protocol (cmd/borg-mcp). It is apart from borg so that the MCP SDK and
// what it brings are not loaded by every borg process, hooks included.
const mcpServer = "borg-mcp"

// mcpCommand runs borg-mcp in borg's place, on the store borg would open:
// an agent registers `borg mcp`, and the server runs the borg that started
// it for each tool ($BORG_BIN).
func mcpCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "mcp",
		Usage:     "serve the store to an agent over the Model Context Protocol (stdio)",
		ArgsUsage: " ",
		Description: "Tools: recall, learn, no, show, list (each as the CLI command of that name).\n" +
			"Resources: every lesson, as borg://lesson/<id>. Register it with borg install --mcp,\n" +
			"or by hand: command borg, arguments mcp. The server is the binary borg-mcp, found\n" +
			"beside borg or on PATH; the README's install line builds both.",
		Flags: []cli.Flag{storeFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("mcp takes no arguments")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			self, err := os.Executable()
			if err != nil {
				return fail(exitFail, "mcp: find borg's own binary: %v", err)
			}
			server, err := findMCPServer()
			if err != nil {
				return fail(exitFail, "%v", err)
			}
			code, err := runInPlace(server, []string{mcpServer, "--store", s.Dir()},
				append(os.Environ(), "BORG_BIN="+self), e.in, e.protocolOut(), e.err)
			if err != nil {
				return fail(exitFail, "mcp: run %s: %v", server, err)
			}
			if code != 0 {
				return &exitError{code: code} // borg-mcp said why on stderr
			}
			return nil
		},
	}
}

// findMCPServer is borg-mcp beside this borg, else on PATH.
func findMCPServer() (string, error) {
	p, err := fsutil.Sibling(mcpServer)
	if err != nil {
		return "", fmt.Errorf("mcp: the MCP server is not installed (%v); install it with borg: CGO_ENABLED=0 go install -tags urfave_cli_no_docs ./cmd/borg ./cmd/borg-mcp (from a checkout)", err)
	}
	return p, nil
}
