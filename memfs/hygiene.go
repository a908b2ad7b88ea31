package memfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/borg-memory/borg/memfs/gitobj"
)

// privateIgnore is .borg/.gitignore: it ignores everything in .borg, itself
// included, so the store's private state (node id, local log with its
// evidence text, caches) stays out of git even when the store's own
// .gitignore loses its .borg/ line to a teammate's edit. It is never
// committed, so no push can take it away.
const privateIgnore = "# borg's private state: never committed (borg doctor checks it)\n*\n"

// guardPrivate writes .borg/.gitignore when .borg exists without it. It is
// best effort (a read-only store stays as it is) and costs one stat when
// the guard is there.
func guardPrivate(root string) {
	p := filepath.Join(root, PrivateDir, ".gitignore")
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		return
	}
	if fi, err := os.Lstat(filepath.Join(root, PrivateDir)); err != nil || !fi.IsDir() {
		return
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return
	}
	_, werr := f.WriteString(privateIgnore)
	if err := f.Close(); werr != nil || err != nil {
		_ = os.Remove(p)
	}
}

// Hygiene lists what is wrong with how the store keeps its private state
// out of git, each with its fix: the store's .gitignore no longer ignoring
// .borg/ (a warning: .borg/.gitignore still guards it), and private files
// committed at HEAD (an error: they are in the history every teammate
// pulls). leaked reports the latter.
func (s *Store) Hygiene() (problems []string, leaked bool) {
	data, err := os.ReadFile(filepath.Join(s.dir, ".gitignore"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		problems = append(problems, fmt.Sprintf(".gitignore: %v", err))
	} else if !ignoresPrivate(string(data)) {
		problems = append(problems, ".gitignore no longer ignores .borg/ (only .borg/.gitignore keeps the private state out of git): add the line back with: echo .borg/ >> .gitignore, and commit it")
	}
	if _, err := os.Lstat(filepath.Join(s.dir, PrivateDir, ".gitignore")); errors.Is(err, os.ErrNotExist) {
		problems = append(problems, ".borg/.gitignore is missing: any borg command run by a user who can write the store puts it back")
	}
	if raw, _, err := s.rawDirAt("HEAD", PrivateDir); err == nil && len(raw) > 0 {
		var names []string
		for i := 0; i < len(raw); {
			e, err := gitobj.NextTreeEntry(raw, i)
			if err != nil {
				break
			}
			names = append(names, PrivateDir+"/"+string(e.Name))
			i = e.End
		}
		leaked = true
		problems = append(problems, fmt.Sprintf("private state is committed at HEAD (%s): remove it with git rm -r --cached .borg and commit; it stays in the history, so treat anything in it (the local log's evidence text) as shared", strings.Join(names, ", ")))
	}
	problems = append(problems, s.gitSettingsCommitted()...)
	return problems, leaked
}

// foreignGitFiles are files that, committed at the top of a repository,
// make some git or git tool run a program or change content: borg runs
// none of them in the store (storeHardening), but a teammate's own git
// tools might.
var foreignGitFiles = map[string]string{
	".gitmodules": "submodules", ".lfsconfig": "git-lfs settings", ".gitconfig": "git settings",
	".githooks": "hook scripts", ".husky": "hook scripts", ".pre-commit-config.yaml": "pre-commit hooks",
}

// gitSettingsCommitted names what a push committed into the store to
// change how git treats it: .gitattributes lines other than borg's own
// (filters, working-tree encodings, line-ending rules, diff or merge
// drivers) and files of foreignGitFiles. Each says that borg ignores it
// and how to remove it; a lesson that no longer reads after a checkout
// under such attributes is explained here, not blamed.
func (s *Store) gitSettingsCommitted() []string {
	var problems []string
	if raw, _, err := s.rawDirAt("HEAD", ""); err == nil {
		for i := 0; i < len(raw); {
			e, err := gitobj.NextTreeEntry(raw, i)
			if err != nil {
				break
			}
			i = e.End
			if what, ok := foreignGitFiles[string(e.Name)]; ok {
				problems = append(problems, fmt.Sprintf("%s is committed (%s): borg runs nothing from the store and ignores it, but a teammate's git may not; remove it with git rm -r %s and commit", e.Name, what, e.Name))
			}
		}
	}
	if !attributesMarked(s.dir) {
		problems = append(problems, fmt.Sprintf(".gitattributes lacks borg's line (%s), the mark that tells a store from a project with a lessons/ folder: this machine knows the store by its node id, a teammate's fresh clone would not; add it back with: echo '%s' >> .gitattributes, and commit it", strings.TrimSpace(gitattributes), strings.TrimSpace(gitattributes)))
	}
	data, err := os.ReadFile(filepath.Join(s.dir, ".gitattributes"))
	if err != nil {
		return problems
	}
	for n, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || borgAttributeLine(l) {
			continue
		}
		problems = append(problems, fmt.Sprintf(".gitattributes line %d (%q) is not borg's: it could change how lessons are checked out (an encoding, a filter, line endings) or run a driver; borg overrides it and reads lessons as git stores them, but lessons checked out under it before may not read (git checkout -- lessons restores them). Remove the line and commit", n+1, l))
	}
	return problems
}

// ignoresPrivate reports whether a .gitignore's lines ignore .borg/.
func ignoresPrivate(gitignore string) bool {
	for _, l := range strings.Split(gitignore, "\n") {
		switch strings.TrimSpace(l) {
		case ".borg", ".borg/", "/.borg", "/.borg/", ".borg/*", "/.borg/*", ".borg/**", "/.borg/**":
			return true
		}
	}
	return false
}

// HeadProblem says what keeps borg from committing on the store's branch,
// with the fix: HEAD detached (every write refuses), or HEAD naming a
// branch that does not exist while others do (a commit would start a new
// history there, apart from the team's). It is "" when HEAD names a branch
// that exists, and for a store with no branch at all.
func (s *Store) HeadProblem(ctx context.Context) string {
	target, err := s.git.dirs().SymbolicTarget("HEAD")
	if err != nil {
		return fmt.Sprintf("HEAD cannot be read (%v): check out the store's branch: git -C %s switch main", err, s.dir)
	}
	if target != "" && s.git.hasCommits() {
		return ""
	}
	out, err := s.runGit(ctx, nil, "for-each-ref", "--format=%(refname:short)", "refs/heads/")
	if err != nil {
		return fmt.Sprintf("HEAD does not name an existing branch, and the branches cannot be listed (%v): check out the store's branch with git switch", err)
	}
	branches := strings.Fields(string(out))
	if len(branches) == 0 {
		return ""
	}
	to := branches[0]
	for _, b := range []string{"master", "main"} {
		if slices.Contains(branches, b) {
			to = b
		}
	}
	fix := fmt.Sprintf("check out the store's branch: git -C %s switch %s", s.dir, to)
	if target == "" {
		at, _ := s.git.dirs().ReadRef("HEAD")
		return fmt.Sprintf("HEAD is detached (at commit %.12s): borg learn, borg no, a sleep, a sync and doctor --fix cannot commit; %s", at, fix)
	}
	return fmt.Sprintf("HEAD names %s, a branch that does not exist, while the store has %s: a commit would start a history apart from the team's, and doctor --fix commits nothing; %s",
		strings.TrimPrefix(target, "refs/heads/"), strings.Join(branches, ", "), fix)
}
