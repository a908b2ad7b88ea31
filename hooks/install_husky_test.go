package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// huskyH is husky v9's runner (.husky/_/h), cut to what it does with a
// hook: run the user's .husky/<hook> with sh -e, when there is one.
const huskyH = `#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
sh -e "$s" "$@"
`

// huskyStub is each of husky v9's hook files in .husky/_.
const huskyStub = "#!/usr/bin/env sh\n. \"$(dirname \"$0\")/h\"\n"

// TestInstallGitUnderHusky: with husky v9 (core.hooksPath=.husky/_, files
// husky writes again at every npm install) borg's lines go into the user's
// .husky/post-commit, which husky runs, and never into husky's own file;
// an older borg's lines there move. Uninstall gives back the user's hook
// (or takes away the one install made) and leaves husky's alone.
func TestInstallGitUnderHusky(t *testing.T) {
	if GitSupportsConfigHooks() {
		t.Skip("git ≥ 2.54 uses hook config; no hook file is written")
	}
	for _, tc := range []struct {
		name     string
		userHook string // .husky/post-commit before install; "" for none
		oldBorg  bool   // an older borg's block in .husky/_/post-commit
	}{
		{"a husky v9 hook", "echo user-hook >> .userhook\n", false},
		{"a hook with a shebang", "#!/usr/bin/env sh\necho user-hook >> .userhook\n", false},
		{"no user hook", "", false},
		{"an older borg's lines in husky's file", "echo user-hook >> .userhook\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := newRepo(t)
			underscore := filepath.Join(repo, ".husky", "_")
			if err := os.MkdirAll(underscore, 0o755); err != nil {
				t.Fatal(err)
			}
			stub := filepath.Join(underscore, "post-commit")
			user := filepath.Join(repo, ".husky", "post-commit")
			if err := os.WriteFile(filepath.Join(underscore, "h"), []byte(huskyH), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(stub, []byte(huskyStub), 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.userHook != "" {
				if err := os.WriteFile(user, []byte(tc.userHook), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			gitRun(t, repo, "config", "core.hooksPath", ".husky/_")
			cmd, calls := fakeBorg(t)
			in := Installer{Repo: repo, Command: cmd}
			if tc.oldBorg {
				// As an older borg left it: its block in husky's file.
				old := strings.Replace(huskyStub, "\n", "\n"+gitHookBlock+" (borg install --git; borg uninstall removes it)\n"+in.postCommitCall()+"\n"+gitHookEnd+"\n", 1)
				if err := os.WriteFile(stub, []byte(old), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			tg, err := in.InstallGit()
			if err != nil {
				t.Fatal(err)
			}
			if tg.Path != user || tg.Action != "installed" {
				t.Fatalf("install: %+v, want installed into %s", tg, user)
			}
			if got := readOr(stub); got != huskyStub {
				t.Fatalf("husky's own file after install:\n%s", got)
			}
			if !strings.Contains(readOr(user), "hook post-commit") {
				t.Fatalf("the user's hook after install:\n%s", readOr(user))
			}
			if tg, err := in.InstallGit(); err != nil || tg.Action != "already installed" {
				t.Fatalf("second install: %+v %v", tg, err)
			}
			gitRun(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
			if got := waitCalls(calls, 1); got != 1 {
				t.Fatalf("borg ran %d times on one commit, want 1", got)
			}
			if tc.userHook != "" && !strings.Contains(readOr(filepath.Join(repo, ".userhook")), "user-hook") {
				t.Fatal("the user's hook did not run after install")
			}
			if tg, err := in.UninstallGit(); err != nil || tg.Path != user {
				t.Fatalf("uninstall: %+v %v", tg, err)
			}
			if got, err := os.ReadFile(user); tc.userHook == "" && err == nil {
				t.Fatalf("uninstall left the hook install made:\n%s", got)
			} else if tc.userHook != "" && string(got) != tc.userHook {
				t.Fatalf("uninstall left %q, want the user's %q", got, tc.userHook)
			}
			if got := readOr(stub); got != huskyStub {
				t.Fatalf("husky's own file after uninstall:\n%s", got)
			}
		})
	}
}
