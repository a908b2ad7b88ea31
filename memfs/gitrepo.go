package memfs

// gitrepo.go finds a repository's git directories, checks its format,
// reads and writes commit objects and resolves revisions, with borg's own
// object reader (gitobj), its own reader of git's config files
// (gitcli.ParseConfig) and go-git's plumbing packages only. go-git's root
// package links every transport (http, ssh, with their crypto and
// configuration parsers) and OpenPGP, its storage package a second object
// reader, and its config package a config parser that brings
// encoding/gob; their package initialisers would run in every borg
// process, every hook included, at start-up. What it does here follows
// what git.PlainOpenWithOptions and Repository.ResolveRevision do, and
// reads the config as git does, or, for a revision expression beyond a
// name and ~/^ steps, asks git rev-parse.

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/borg-memory/borg/memfs/gitcli"
	"github.com/borg-memory/borg/memfs/gitobj"
	"github.com/go-git/go-git/v5/plumbing"
)

// errNoRepository: no git repository where one was looked for (or its
// git directory has no HEAD).
var errNoRepository = errors.New("repository does not exist")

// repoDirs are a worktree's root and its git directories (gitcli.Dirs).
type repoDirs struct {
	root string
	gitcli.Dirs
}

// findRepo finds the repository of dir: dir/.git, or with detect the .git
// of the nearest directory above dir that has one (dir itself may be a
// file); its git directories are gitcli.FindDirs', and without common the
// common directory is taken to be the git directory. A git directory that
// does not exist is no repository; a common directory that does not exist
// is an incomplete one. A leading ~ or ~user is the home directory.
func findRepo(dir string, detect, common bool) (repoDirs, error) {
	p, err := expandTilde(dir)
	if err != nil {
		return repoDirs{}, err
	}
	if p, err = filepath.Abs(p); err != nil {
		return repoDirs{}, err
	}
	var root string
	for {
		root = p
		if st, err := os.Stat(p); err == nil {
			if !st.IsDir() && detect {
				root = filepath.Dir(p)
			}
		} else if !os.IsNotExist(err) {
			return repoDirs{}, err
		}
		_, err := os.Stat(filepath.Join(root, ".git"))
		if err == nil {
			break
		}
		if !os.IsNotExist(err) {
			return repoDirs{}, err
		}
		if up := filepath.Dir(p); detect && up != p {
			p = up
			continue
		}
		return repoDirs{}, errNoRepository
	}
	d, err := gitcli.FindDirs(root)
	if err != nil {
		return repoDirs{}, err
	}
	if _, err := os.Stat(d.Git); err != nil {
		if os.IsNotExist(err) {
			return repoDirs{}, errNoRepository
		}
		return repoDirs{}, err
	}
	if !common {
		d.Common = d.Git
	} else if _, err := os.Stat(d.Common); err != nil {
		if os.IsNotExist(err) {
			return repoDirs{}, errors.New("repository incomplete")
		}
		return repoDirs{}, err
	}
	return repoDirs{root: root, Dirs: d}, nil
}

// expandTilde replaces a leading ~/ with the home directory and ~user/
// with that user's.
func expandTilde(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	switch slash := strings.Index(p, "/"); {
	case slash == 1:
		home, err := os.UserHomeDir()
		if err != nil {
			return p, err
		}
		return home + p[1:], nil
	case slash > 1:
		u, err := user.Lookup(p[1:slash])
		if err != nil {
			return p, err
		}
		return u.HomeDir + p[slash:], nil
	}
	return p, nil
}

// repoConfig checks that the repository r has a HEAD and a format it can
// be read in (checkRepo), and returns its own config (that of its common
// directory; empty when it has none).
func repoConfig(r gitcli.Dirs) (*gitcli.Config, error) {
	cfg, err := gitcli.ReadConfigFile(filepath.Join(r.Common, "config"))
	if err != nil {
		return nil, err
	}
	if err := checkRepo(r, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// checkRepo checks that the repository r, whose config is cfg, has a HEAD
// and a format it can be read in (checkExtensions).
func checkRepo(r gitcli.Dirs, cfg *gitcli.Config) error {
	if _, err := os.Lstat(filepath.Join(r.Git, "HEAD")); os.IsNotExist(err) {
		return errNoRepository
	}
	return checkExtensions(cfg)
}

// checkExtensions refuses, as git refuses to open it, a repository whose
// core.repositoryFormatVersion is other than 0 or 1, or that names an
// extension beyond noop (and noop-v1 in format 1): what such an extension
// changes, borg's readers would not know.
func checkExtensions(cfg *gitcli.Config) error {
	version, _ := cfg.Get("core", "", "repositoryformatversion")
	switch version {
	case "", "0", "1":
	default:
		return fmt.Errorf("core.repositoryformatversion not supported: %q", version)
	}
	v0 := version != "1"
	var early, unknown []string
	for _, name := range cfg.Names("extensions") {
		switch name {
		case "noop", "partialclone", "preciousobjects", "worktreeconfig":
		default:
			if v0 {
				early = append(early, name)
			}
		}
		if name != "noop" && name != "noop-v1" {
			unknown = append(unknown, name)
		}
	}
	if len(early) > 0 {
		return fmt.Errorf("core.repositoryformatversion does not support extension: %s", strings.Join(early, ", "))
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown extension: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// gitUser is user.name and user.email as git reads them for a repository
// whose own config is local (nil outside one): local's values over those
// of the user's global files (gitcli.GlobalConfigFiles).
func gitUser(local *gitcli.Config) (name, email string, err error) {
	configs := []*gitcli.Config{}
	for _, p := range gitcli.GlobalConfigFiles(os.Getenv) {
		c, err := gitcli.ReadConfigFile(p)
		if err != nil {
			return "", "", err
		}
		configs = append(configs, c)
	}
	if local != nil {
		configs = append(configs, local)
	}
	for _, c := range configs {
		if v, ok := c.Get("user", "", "name"); ok {
			name = v
		}
		if v, ok := c.Get("user", "", "email"); ok {
			email = v
		}
	}
	return name, email, nil
}

// signature is a commit's author or committer.
type signature struct {
	Name, Email string
	When        time.Time
}

// append writes s as a commit header writes it: "Name <email> secs ±hhmm"
// (a time before 1970 as 0).
func (s signature) append(b []byte) []byte {
	b = append(b, s.Name...)
	b = append(b, " <"...)
	b = append(b, s.Email...)
	b = append(b, "> "...)
	b = strconv.AppendInt(b, max(s.When.Unix(), 0), 10)
	b = append(b, ' ')
	return s.When.AppendFormat(b, "-0700")
}

// parseSignature reads a signature header's value: the name before the
// last '<', the email up to the last '>', then the seconds and the zone.
// What does not parse is left empty (a zero time).
func parseSignature(b []byte) signature {
	var s signature
	open, end := bytes.LastIndexByte(b, '<'), bytes.LastIndexByte(b, '>')
	if open < 0 || end < open {
		return s
	}
	s.Name = string(bytes.Trim(b[:open], " "))
	s.Email = string(b[open+1 : end])
	if end+2 >= len(b) {
		return s
	}
	rest := b[end+2:]
	secs, zone, _ := bytes.Cut(rest, []byte(" "))
	ts, err := strconv.ParseInt(string(secs), 10, 64)
	if err != nil {
		return s
	}
	s.When = time.Unix(ts, 0).In(time.UTC)
	if len(zone) < 5 {
		return s
	}
	h, err1 := strconv.ParseInt(string(zone[:3]), 10, 64)
	m, err2 := strconv.ParseInt(string(zone[3:5]), 10, 64)
	if err1 != nil || err2 != nil {
		return s
	}
	if h < 0 {
		m = -m
	}
	s.When = s.When.In(time.FixedZone("", int(h*3600+m*60)))
	return s
}

// gitCommit is a commit object's fields borg reads and writes.
type gitCommit struct {
	Tree              plumbing.Hash
	Parents           []plumbing.Hash
	Author, Committer signature
	Message           string
}

// encode is the commit object's content: tree, parents, author and
// committer headers, a blank line, the message.
func (c *gitCommit) encode() []byte {
	b := make([]byte, 0, 256+len(c.Message))
	b = append(b, "tree "...)
	b = append(b, c.Tree.String()...)
	b = append(b, '\n')
	for _, p := range c.Parents {
		b = append(b, "parent "...)
		b = append(b, p.String()...)
		b = append(b, '\n')
	}
	b = append(b, "author "...)
	b = c.Author.append(b)
	b = append(b, "\ncommitter "...)
	b = c.Committer.append(b)
	b = append(b, "\n\n"...)
	return append(b, c.Message...)
}

// errMalformedCommit: a commit object without its tree header first, or
// with an id that does not parse.
var errMalformedCommit = errors.New("malformed commit")

// parseCommit reads a commit object's tree, parents and author as git
// does: the tree header first, then the parent headers, the author next
// (an author elsewhere is not the author). The committer and the message
// are not read.
func parseCommit(raw []byte) (gitCommit, error) {
	var c gitCommit
	id := func(v []byte) (plumbing.Hash, bool) {
		var h plumbing.Hash
		n, err := hex.Decode(h[:], v)
		return h, err == nil && n == len(h) && len(v) == 2*len(h)
	}
	for i := 0; ; i++ {
		l, rest, _ := bytes.Cut(raw, []byte("\n"))
		raw = rest
		if len(l) == 0 { // the blank line that ends the headers
			if i == 0 {
				return c, fmt.Errorf("%w: no tree header", errMalformedCommit)
			}
			return c, nil
		}
		key, val, _ := bytes.Cut(l, []byte(" "))
		switch k := string(key); {
		case i == 0 && k != "tree":
			return c, fmt.Errorf("%w: no tree header first", errMalformedCommit)
		case i == 0:
			var ok bool
			if c.Tree, ok = id(val); !ok {
				return c, fmt.Errorf("%w: tree %q", errMalformedCommit, val)
			}
		case k == "parent":
			h, ok := id(val)
			if !ok {
				return c, fmt.Errorf("%w: parent %q", errMalformedCommit, val)
			}
			c.Parents = append(c.Parents, h)
		case k == "author":
			c.Author = parseSignature(val)
			return c, nil
		default:
			return c, nil
		}
	}
}

// readCommit reads and parses commit h.
func (g *gitRepo) readCommit(h plumbing.Hash) (gitCommit, error) {
	raw, err := g.readObject(gitobj.Commit, h)
	if err != nil {
		return gitCommit{}, err
	}
	return parseCommit(raw)
}

// resolveRevision is the commit a branch or tag name, a full commit id, or
// either followed by ~n and ^n steps names, read from git's ref files and
// objects; any other revision git rev-parse resolves. A name that names
// nothing, or a step past the first commit, is ErrNotFound.
func (s *Store) resolveRevision(rev string) (plumbing.Hash, error) {
	base, steps := rev, ""
	if i := strings.IndexAny(rev, "~^"); i >= 0 {
		base, steps = rev[:i], rev[i:]
	}
	if base == "" || strings.ContainsAny(base, ":@{} \t\n") || strings.Trim(steps, "~^0123456789") != "" {
		return s.revParse(rev)
	}
	h, ok := s.resolveName(base)
	if !ok {
		return s.revParse(rev)
	}
	for steps != "" {
		op := steps[0]
		end := 1
		for end < len(steps) && steps[end] >= '0' && steps[end] <= '9' {
			end++
		}
		n := 1
		if end > 1 {
			var err error
			if n, err = strconv.Atoi(steps[1:end]); err != nil || n > 1<<20 {
				return s.revParse(rev)
			}
		}
		steps = steps[end:]
		if op == '^' && n == 0 {
			continue
		}
		walk, nth := n, 0 // ~n: n first parents; ^n: the nth parent
		if op == '^' {
			walk, nth = 1, n-1
		}
		for ; walk > 0; walk-- {
			c, err := s.git.readCommit(h)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			if nth >= len(c.Parents) {
				return plumbing.ZeroHash, ErrNotFound
			}
			h = c.Parents[nth]
		}
	}
	return h, nil
}

// resolveName is the commit a full commit id or a ref names, by git's
// rules for a short ref name (name, refs/name, refs/tags/name,
// refs/heads/name, refs/remotes/name, refs/remotes/name/HEAD); ok is false
// when that takes more than the ref files and a commit object tell (an
// abbreviated id, a tag object, a ref this reader cannot read, nothing of
// that name), for git to say.
func (s *Store) resolveName(name string) (plumbing.Hash, bool) {
	isCommit := func(h plumbing.Hash) bool {
		_, err := s.git.readObject(gitobj.Commit, h)
		return err == nil
	}
	if isHash(name) {
		if h := plumbing.NewHash(name); isCommit(h) {
			return h, true
		}
	}
	if strings.Trim(name, "0123456789abcdefABCDEF") == "" && len(name) >= 4 {
		return plumbing.ZeroHash, false // it may abbreviate an id
	}
	for _, f := range []string{"%s", "refs/%s", "refs/tags/%s", "refs/heads/%s", "refs/remotes/%s", "refs/remotes/%s/HEAD"} {
		id, err := s.git.dirs().ReadRef(fmt.Sprintf(f, name))
		if errors.Is(err, gitcli.ErrNoRef) {
			continue
		}
		if err != nil {
			return plumbing.ZeroHash, false
		}
		h := plumbing.NewHash(id)
		return h, isCommit(h)
	}
	return plumbing.ZeroHash, false
}

// revParse asks git for the commit rev names; git's "not found" (exit
// status 1 under --verify --quiet) is ErrNotFound.
func (s *Store) revParse(rev string) (plumbing.Hash, error) {
	out, err := s.runGit(context.Background(), nil, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	var ge *GitError
	if errors.As(err, &ge) {
		var ee interface{ ExitCode() int }
		if errors.As(ge.Err, &ee) && ee.ExitCode() == 1 {
			return plumbing.ZeroHash, ErrNotFound
		}
	}
	if err != nil {
		return plumbing.ZeroHash, err
	}
	id := strings.TrimSpace(string(out))
	if !isHash(id) {
		return plumbing.ZeroHash, fmt.Errorf("git rev-parse printed %q", id)
	}
	return plumbing.NewHash(id), nil
}
