// Package hooks adapts agent and git hooks to borg: the agent's hook JSON on
// stdin becomes decisions, and at most one JSON object goes to stdout. Every
// hook fails open: an error or a panic exits 0 with empty stdout and one line
// on stderr.
package hooks
