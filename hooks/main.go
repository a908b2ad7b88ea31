package hooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Events names the hook verbs borg answers: `borg hook <verb>`.
var Events = []string{"stop", "prompt", "session-start", "post-tool", "post-commit"}

// Opener builds a hook's dependencies (store, index, clock). It runs inside
// the fail-open guard: its errors and panics are a silent exit 0 too.
type Opener func(ctx context.Context) (*Deps, error)

// Main runs one hook end to end and returns the process exit code, which is
// always 0: a hook never breaks the agent or the commit. verb is one of
// Events; stdin holds the agent's JSON (ignored for post-commit, which git
// calls with nothing); cwd is the process's directory, used by post-commit.
func Main(ctx context.Context, verb string, stdin io.Reader, stdout, stderr io.Writer, deadline time.Duration, cwd string, open Opener) int {
	return Run(ctx, verb, deadline, stdout, stderr, func(ctx context.Context) (*Output, error) {
		var in Input
		if verb != "post-commit" {
			var err error
			if in, err = ParseInput(stdin); err != nil {
				return nil, err
			}
			if in.CWD == "" {
				in.CWD = cwd // agents run hooks in the project directory
			}
		}
		d, err := open(ctx)
		if err != nil {
			return nil, err
		}
		var out *Output
		switch verb {
		case "stop":
			out, err = Stop(ctx, d, in)
		case "prompt":
			out, err = Prompt(ctx, d, in)
		case "session-start":
			out, err = SessionStart(ctx, d, in)
		case "post-tool":
			out, err = PostTool(ctx, d, in)
		case "post-commit":
			if cwd == "" {
				cwd, _ = os.Getwd()
			}
			return PostCommit(ctx, d, cwd)
		default:
			return nil, fmt.Errorf("unknown hook %q (want one of stop, prompt, session-start, post-tool, post-commit)", verb)
		}
		if out != nil {
			out.Agent = in.Agent // answer in the dialect asked
		}
		return out, err
	})
}

// ErrForcedPanic is what BORG_HOOK_PANIC=1 panics with: a switch for the
// fail-open tests of the real binary.
var ErrForcedPanic = errors.New("forced panic (BORG_HOOK_PANIC)")
