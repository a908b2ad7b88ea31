package memfs

// gitcli.go runs the git CLI in the store, for what go-git cannot do well:
// talking to a remote as the user's git does (their credential helpers,
// ssh configuration, proxies, url rewrites), and 3-way merges that update
// the worktree and the index.

import (
	"context"
	"io"
)

// GitCLI is the runner for git in the store's worktree. It never prompts
// (a hook or a cron job has no one to answer: credentials come from the
// user's helpers and agents), reads git's messages in the C locale, acts on
// the store whatever repository called borg (Git.Isolate), dies with borg,
// and its commits carry the identity borg's own commits do (signatures).
func (s *Store) GitCLI() Git {
	author, committer := s.signatures(s.now())
	return Git{Dir: s.dir, Isolate: true, DieWithParent: true, Env: []string{
		"GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_MERGE_AUTOEDIT=no",
		"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email,
		"GIT_COMMITTER_NAME=" + committer.Name, "GIT_COMMITTER_EMAIL=" + committer.Email,
	}}
}

// runGit runs git in the store's worktree (GitCLI) and returns its stdout.
func (s *Store) runGit(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	return s.GitCLI().Run(ctx, stdin, args...)
}
