package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSuggestMistypes: a mistyped command or flag is a usage error (exit 2)
// that names the closest command or flag when it is near enough to be a
// typo, and names none when nothing is.
func TestSuggestMistypes(t *testing.T) {
	vars := map[string]string{"BORG_STORE": t.TempDir()}
	for _, tc := range []struct {
		name    string
		args    []string
		want    string // in stderr
		notWant string
	}{
		{name: "command one letter short", args: []string{"recal", "x"}, want: `did you mean "borg recall"?`},
		{name: "command letters swapped", args: []string{"laern", "x"}, want: `did you mean "borg learn"?`},
		{name: "command prefix", args: []string{"doc"}, want: `did you mean "borg doctor"?`},
		{name: "subcommand", args: []string{"eval", "retreival"}, want: `did you mean "borg eval retrieval"?`},
		{name: "nothing close", args: []string{"xyzzy"}, want: `no command "borg xyzzy"`, notWant: "did you mean"},
		{name: "flag", args: []string{"recall", "--explian", "x"}, want: "borg recall has no flag --explian; did you mean --explain?"},
		{name: "flag after the argument", args: []string{"list", "--jsn"}, want: "did you mean --json?"},
		{name: "global flag", args: []string{"--stor", "x", "list"}, want: "did you mean --store?"},
		{name: "short flag has no guess", args: []string{"recall", "-z", "x"}, want: "has no flag -z", notWant: "did you mean"},
		{name: "bad value", args: []string{"recall", "-k", "nope", "x"}, want: `invalid value "nope" for flag -k`},
		{name: "--store after a command that takes only the global one", args: []string{"install", "--store", "x"}, want: "borg install has no flag --store: name the store before the command, borg --store DIR install"},
		{name: "--store= after a command that takes only the global one", args: []string{"uninstall", "--store=x"}, want: "borg --store DIR uninstall"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := inProcess(t, vars, "", tc.args...)
			if code != exitUsage {
				t.Errorf("borg %s: exit %d, want %d", strings.Join(tc.args, " "), code, exitUsage)
			}
			if !strings.Contains(stderr, tc.want) || (tc.notWant != "" && strings.Contains(stderr, tc.notWant)) {
				t.Errorf("borg %s: stderr %q, want %q and not %q", strings.Join(tc.args, " "), stderr, tc.want, tc.notWant)
			}
			if strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("borg %s: want one line on stderr and nothing on stdout, got %q and %q", strings.Join(tc.args, " "), stderr, stdout)
			}
		})
	}
	// A hook verb mistyped in an agent's settings fails open: exit 0, one
	// line on stderr naming the verb it was likely meant to be.
	if code, stdout, stderr := inProcess(t, vars, "{}", "hook", "stp"); code != 0 || stdout != "" ||
		!strings.Contains(stderr, `did you mean "borg hook stop"?`) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("borg hook stp: exit %d, stdout %q, stderr %q; want exit 0 and one line naming borg hook stop", code, stdout, stderr)
	}
	// Without arguments borg and a command with subcommands print their help.
	for _, args := range [][]string{nil, {"eval"}} {
		if code, stdout, _ := inProcess(t, vars, "", args...); code != 0 || !strings.Contains(stdout, "USAGE") {
			t.Errorf("borg %v: exit %d, stdout %q; want the help", args, code, stdout)
		}
	}
}

// TestCommandsRunAtOnce: commands run in one process at the same time (as
// the parallel tests and `borg eval asks` run theirs) each run as alone:
// the command line library's package-level values are not written by two
// at once (under -race, a data race fails this test), and a command run
// from within another's action does not wait for the first to end.
func TestCommandsRunAtOnce(t *testing.T) {
	runs := [][]string{{"learn", "--help"}, {"recall", "--help"}, {"version"}, {"eval", "--help"}}
	done := make(chan string, 2*len(runs)+1)
	for _, args := range runs {
		go func() {
			code, stdout, _ := inProcess(t, map[string]string{"BORG_STORE": t.TempDir()}, "", args...)
			if code != 0 || stdout == "" {
				done <- fmt.Sprintf("borg %s: exit %d, stdout %q", strings.Join(args, " "), code, stdout)
				return
			}
			done <- ""
		}()
		go func() {
			vars := map[string]string{"BORG_STORE": t.TempDir(), "HOME": t.TempDir(), "BORG_ENGINEER": "a@example.com"}
			for _, args := range [][]string{{"init"}, {"learn", "The gateway listens on port 8443."}, {"list"}} {
				if code, _, stderr := inProcess(t, vars, "", args...); code != 0 {
					done <- fmt.Sprintf("borg %s: exit %d: %s", strings.Join(args, " "), code, stderr)
					return
				}
			}
			done <- ""
		}()
	}
	// `borg eval asks` runs borg's own commands from within its action.
	set := t.TempDir()
	for name, body := range map[string]string{
		"lessons.jsonl":  `{"key":"L1","gist":"The gateway listens on port 8443."}` + "\n",
		"sessions.jsonl": `{"id":"S1","prompt":"Rename the invoices table","final":"Renamed it.","relevant":[]}` + "\n",
	} {
		if err := os.WriteFile(filepath.Join(set, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		code, stdout, stderr := inProcess(t, map[string]string{"HOME": t.TempDir()}, "", "eval", "asks", set)
		if code != 0 || !strings.Contains(stdout, "abstention") {
			done <- fmt.Sprintf("borg eval asks: exit %d, stdout %q, stderr %q", code, stdout, stderr)
			return
		}
		done <- ""
	}()
	for range 2*len(runs) + 1 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
