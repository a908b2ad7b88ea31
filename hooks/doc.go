// Package hooks adapts agent and git hooks to borg: the agent's hook JSON on
// stdin becomes decisions, and at most one JSON object goes to stdout. Every
// hook fails open: an error or a panic exits 0 with empty stdout and one line
// on stderr.
//
// # Dialects
//
// Claude Code, Codex CLI and Qwen Code share one hook schema; Gemini CLI,
// Cursor and Cline each have their own. ParseInput reads any of them into
// one Input and names its dialect (Input.Agent), and an Output is written
// back in it. Where an agent cannot be made to go on after a stop (Cline),
// the ask goes out with its next prompt instead (with its CLI, which waits
// for no prompt hook, with its next tool result). docs/agents.md cites each agent's hook
// documentation and maps its events onto borg's verbs.
package hooks
