package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/borg-memory/borg/hooks"
)

// TestHookFastPath: `borg hook VERB`, as borg install writes it, runs
// without the command tree (run's fast path) and answers exactly as the
// command tree does (`borg --store DIR hook VERB` takes that path): the
// same exit code, stdout and stderr for input a hook fails open on, and the
// same decision for a session's Stop.
func TestHookFastPath(t *testing.T) {
	vars := adversarialStore(t)
	viaTree := []string{"--store", vars["BORG_STORE"], "hook"}
	for _, verb := range hooks.Events {
		for _, stdin := range []string{"", "{not json", `{"session_id": 7}`} {
			code, out, errs := inProcess(t, vars, stdin, "hook", verb)
			code2, out2, errs2 := inProcess(t, vars, stdin, append(viaTree, verb)...)
			if code != code2 || out != out2 || errs != errs2 {
				t.Errorf("hook %s with %q: fast path %d %q %q, command tree %d %q %q", verb, stdin, code, out, errs, code2, out2, errs2)
			}
			if code != 0 || out != "" || strings.Count(errs, "\n") > 1 {
				t.Errorf("hook %s with %q does not fail open: %d %q %q", verb, stdin, code, out, errs)
			}
		}
	}
	dir := t.TempDir()
	for i, args := range [][]string{{"hook"}, viaTree} {
		session := fmt.Sprintf("fast-path-%d", i)
		start := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"source":"startup"}`, session, dir)
		stop := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"last_assistant_message":"I ran the migrations before the integration tests."}`, session, dir)
		if code, _, errs := inProcess(t, vars, start, append(args, "session-start")...); code != 0 {
			t.Fatalf("%v session-start: %d %s", args, code, errs)
		}
		code, out, errs := inProcess(t, vars, stop, append(args, "stop")...)
		if code != 0 || !strings.Contains(out, `"decision":"block"`) || !strings.Contains(out, "Run migrations before the integration tests") {
			t.Errorf("%v stop: %d %q %q, want the migrations lesson asked", args, code, out, errs)
		}
	}
}
