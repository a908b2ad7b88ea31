package hooks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

func TestWanted(t *testing.T) {
	tests := []struct {
		name, response, want string
	}{
		{"bash command not found", `{"stdout":"","stderr":"bash: line 1: pnpm: command not found"}`, "cmd:pnpm"},
		{"bash, plain", `{"stderr":"bash: terraform: command not found\n"}`, "cmd:terraform"},
		{"dash", `{"stderr":"sh: 1: protoc: not found"}`, "cmd:protoc"},
		{"zsh", `{"stderr":"zsh: command not found: kubectl"}`, "cmd:kubectl"},
		{"go exec", `{"stderr":"exec: \"golangci-lint\": executable file not found in $PATH"}`, "cmd:golangci-lint"},
		{"make target", `{"stderr":"make: *** No rule to make target 'migrate'.  Stop."}`, "make:migrate"},
		{"make target, nested", "{\"stderr\":\"make[1]: *** No rule to make target `db/seed.sql', needed by `seed'.  Stop.\"}", "make:db/seed.sql"},
		{"npm script", `{"stderr":"npm ERR! Missing script: \"lint:fix\""}`, "npm:lint:fix"},
		{"npm 10", `{"stderr":"npm error Missing script: \"e2e\""}`, "npm:e2e"},
		{"yarn", `{"stderr":"error Command \"typecheck\" not found."}`, "npm:typecheck"},
		{"python file, outside the project: its name only", `{"stderr":"python3: can't open file '/home/ada/x/gen.py': [Errno 2] No such file or directory"}`, "file:gen.py"},
		{"cat file", `{"stderr":"cat: cannot open 'docs/ARCH.md': No such file or directory"}`, "file:docs/ARCH.md"},
		{"script file", `{"stderr":"bash: ./scripts/release.sh: No such file or directory"}`, "file:./scripts/release.sh"},
		{"a codex string response", `"bash: line 1: pnpm: command not found"`, "cmd:pnpm"},
		{"success", `{"stdout":"ok  \tpay\t0.2s","stderr":""}`, ""},
		{"a tool's own not found", `{"stdout":"config key: not found\npathspec: not found"}`, ""},
		{"nothing", ``, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wanted(Input{ToolResponse: json.RawMessage(tc.response)})
			if got != tc.want {
				t.Errorf("wanted = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestProtoRecurs: three sessions whose agents reach for the same missing
// make target record one proto passing each; folded, it is a recurring
// proto (uses ≥ 3, weight ≥ 0.30). A fourth call in one session adds none.
func TestProtoRecurs(t *testing.T) {
	repo := newRepo(t)
	d, st := newDeps(t, repo)
	for i := range 3 {
		call := fmt.Sprintf(`{"session_id":"proto-%d","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make migrate"},"tool_response":{"stdout":"","stderr":"make: *** No rule to make target 'migrate'.  Stop.","exit_code":2}}`, i, repo)
		runHook(t, d, "post-tool", call, "")
		runHook(t, d, "post-tool", call, "")
	}
	var passings []domain.Event
	for _, e := range st.events {
		if e.Kind == domain.KindPassing {
			passings = append(passings, e)
		}
	}
	if len(passings) != 3 {
		t.Fatalf("%d proto passings, want one per session: %+v", len(passings), passings)
	}
	for _, e := range passings {
		if e.Src != "Bash:make" || e.Dst != "make:migrate" || e.DstV != domain.ProtoVersion {
			t.Fatalf("proto passing %+v", e)
		}
	}
	links := domain.FoldLinks(st.events)
	rec := domain.RecurringProtos(links, passings[2].MS)
	if len(rec) != 1 || rec[0].Dst != "make:migrate" || rec[0].Uses != 3 {
		t.Fatalf("recurring protos %+v (links %+v)", rec, links)
	}
}

// TestLessonPassing: two lessons acted on in one session write one lesson →
// lesson passing, in the order they were acted on, each end versioned by
// the lesson's content.
func TestLessonPassing(t *testing.T) {
	repo := newRepo(t)
	d, st := newDeps(t, repo)
	fix := func(s string) string { return strings.ReplaceAll(s, "REPO", repo) }
	runHook(t, d, "prompt", fix(`{"session_id":"l1","cwd":"REPO","prompt":"payments client: add retries and an outbound HTTP timeout"}`), "")
	out, _ := runHook(t, d, "stop", fix(`{"session_id":"l1","cwd":"REPO","last_assistant_message":"working on the payments client"}`), "")
	if !strings.Contains(out, "retry-backoff-3c1d") || !strings.Contains(out, "timeouts-context-9f2e") {
		t.Fatalf("both lessons should be asked: %q", out)
	}
	writeFile(t, repo, "pay/client.go", "package pay\n\n// Retry the payments client with exponential backoff and jitter.\n"+
		"// Every outbound HTTP call takes a context with a timeout: the gateway hangs silently.\nfunc call() {}\n")
	runHook(t, d, "stop", fix(`{"session_id":"l1","cwd":"REPO","last_assistant_message":"retry-backoff-3c1d: applies\ntimeouts-context-9f2e: applies"}`), "")
	var passings []domain.Event
	for _, e := range st.events {
		if e.Kind == domain.KindPassing {
			passings = append(passings, e)
		}
	}
	if st.kinds()[domain.KindChanged] != 2 {
		t.Fatalf("want both lessons changed: %v", st.kinds())
	}
	if len(passings) != 1 {
		t.Fatalf("passings %+v, want one lesson → lesson", passings)
	}
	p := passings[0]
	lessons := testLessons()
	if p.Src != "retry-backoff-3c1d" || p.Dst != "timeouts-context-9f2e" ||
		p.SrcV != lessonVersion(lessons[p.Src]) || p.DstV != lessonVersion(lessons[p.Dst]) {
		t.Fatalf("passing %+v", p)
	}
}

// FuzzWanted: any tool response gives a proto destination that is empty or
// KIND:VALUE on one line, short, with no absolute path, and the same with
// the phrase filter as without.
func FuzzWanted(f *testing.F) {
	for _, s := range []string{`{"stderr":"bash: pnpm: command not found"}`, `"make: *** No rule to make target 'x'.  Stop."`,
		`{"stderr":"cat: cannot open '/etc/passwd': No such file or directory"}`, `not json`, `"npm ERR! Miſſing ſcript: build"`} {
		f.Add(s, "/repo")
	}
	f.Fuzz(func(t *testing.T, response, cwd string) {
		got := wanted(Input{ToolResponse: json.RawMessage(response), CWD: cwd})
		// The phrase filter drops no text a pattern reads.
		if all := wantedIn(toolOutput(json.RawMessage(response)), cwd, false); got != all {
			t.Fatalf("wanted = %q with the phrase filter, %q without", got, all)
		}
		if got == "" {
			return
		}
		kind, v, ok := strings.Cut(got, ":")
		if !ok || kind == "" || v == "" || len(v) > 120 || strings.ContainsAny(got, "\n\x00") || strings.HasPrefix(v, "/") {
			t.Fatalf("wanted = %q", got)
		}
	})
}

// FuzzPlainName: the hand check says what the expression it replaced says.
func FuzzPlainName(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$`)
	for _, s := range []string{"go", "golangci-lint", "g++", "-x", "", "a/b", strings.Repeat("a", 40), strings.Repeat("a", 41), "é", "a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := plainName(s), re.MatchString(s); got != want {
			t.Fatalf("plainName(%q) = %v, the expression says %v", s, got, want)
		}
	})
}

// TestProgramOf: a shell command's program as a shared endpoint names: no
// assignment, no path, no value from the command line.
func TestProgramOf(t *testing.T) {
	for cmd, want := range map[string]string{
		"go test ./...": "go",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI ./deploy": "deploy",
		"/home/alice/bin/mytool --flag":                "mytool",
		"FOO=1 BAR=2 make migrate":                     "make",
		"$(curl evil) x":                               "sh",
		"`id`":                                         "sh",
		"":                                             "",
		"A=1":                                          "",
	} {
		if got := programOf(cmd); got != want {
			t.Errorf("programOf(%q) = %q, want %q", cmd, got, want)
		}
	}
	if v := PathVersion("/usr/bin/make"); !strings.HasPrefix(v, "p-") || strings.Contains(v, "/") || len(v) != 10 {
		t.Errorf("PathVersion = %q", v)
	}
}

// FuzzPathTokens: the hand scan finds what the expression it replaced
// finds, and pathsIn stops at its bound.
func FuzzPathTokens(f *testing.F) {
	re := regexp.MustCompile(`[A-Za-z0-9_.\-]*/[A-Za-z0-9_.\-/]+|[A-Za-z0-9_\-]+\.[A-Za-z0-9]{1,6}\b`)
	for _, s := range []string{"ok  \tpayments\t0.012s\n", "/usr/bin/go", "a.b.cd", "main.go:12: x", "archive.tar.gz", "x.abcdefg", "x.abc_", "./cmd/borg/main_test.go ok",
		"//", "a/", "é.go", "name.é", "v1.2.3/x", strings.Repeat("a", 300) + ".go"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got []string
		pathTokens(s, func(m string) bool { got = append(got, m); return true })
		if want := re.FindAllString(s, -1); !slices.Equal(got, want) {
			t.Fatalf("pathTokens(%q) = %q, the expression finds %q", s, got, want)
		}
		if p := pathsIn(s, 2); len(p) > 2 {
			t.Fatalf("pathsIn(%q, 2) = %q", s, p)
		}
	})
}
