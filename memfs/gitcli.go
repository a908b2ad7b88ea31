package memfs

// gitcli.go runs the git CLI in the store, for what go-git cannot do well:
// talking to a remote as the user's git does (their credential helpers,
// ssh configuration, proxies, url rewrites), and 3-way merges that update
// the worktree and the index.

import (
	"context"
	"io"
	"os"
)

// GitCLI is the runner for git in the store's worktree. It never prompts
// (a hook or a cron job has no one to answer: credentials come from the
// user's helpers and agents), reads git's messages in the C locale, acts on
// the store whatever repository called borg (Git.Isolate), and its commits
// carry the identity borg's own commits do (signatures).
//
// A git run while this process holds the store's write lock keeps the lock
// open (Git.Keep): a borg killed meanwhile leaves its git to finish, and
// the store locked until it has, so git ends its work and removes its own
// locks, and the next writer starts after it. git is not killed with borg:
// git can only remove the lock files it takes when it ends normally or by
// a signal it has had time to prepare for. For the same reason git's
// automatic gc runs in the foreground of the command that starts it
// (gc.autoDetach=false) instead of keeping the store locked in the
// background.
func (s *Store) GitCLI() Git {
	author, committer := s.signatures(s.now())
	g := Git{Dir: s.dir, Isolate: true, Env: []string{
		"GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_MERGE_AUTOEDIT=no",
		"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email,
		"GIT_COMMITTER_NAME=" + committer.Name, "GIT_COMMITTER_EMAIL=" + committer.Email,
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=gc.autoDetach", "GIT_CONFIG_VALUE_0=false",
	}}
	if f := s.held.Load(); f != nil {
		g.Keep = []*os.File{f}
	}
	return g
}

// runGit runs git in the store's worktree (GitCLI) and returns its stdout.
func (s *Store) runGit(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	return s.GitCLI().Run(ctx, stdin, args...)
}
