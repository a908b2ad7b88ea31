package memfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Signed evidence: a team setting that counts a committed log line only
// when the commit that first added it carries a signature git verifies.
//
// Without it a line counts as its committer's, and anyone who can push can
// commit as anyone (attrib.go). With `git config borg.evidence signed` the
// refresh asks git to verify the signature of every commit that added log
// lines (the check `git verify-commit` makes: the same gpg, ssh or x509
// setup, gpg.ssh.allowedSignersFile for ssh keys), and:
//
//   - a line whose commit is unsigned, or whose signature git cannot
//     verify, counts as nobody's: the readers leave its event out of the
//     ledger and the summary (no session, no result, no consolidation, no
//     early delivery), and doctor says how many such lines there are;
//   - a verified line counts as the signer's, not as the commit's author
//     email: one key signs as one engineer however many names its commits
//     carry;
//   - a line committed since the last refresh (Unattributed) is not known
//     to be signed yet and is left out too until a command refreshes.
//
// Lines this machine wrote and has not committed yet still count (they
// never left it). The setting lives in git's config, the user's or the
// store's, never in a file of the store: a teammate's push must not be
// able to switch it off. borg signs its own commits when the setting is on
// or when commit.gpgSign asks for it (commitOnRef), so a team that turns
// it on keeps its own evidence.

// evidenceSettings are the git settings that decide how evidence counts
// and whether borg's commits are signed, and gc.auto, which a write asks
// after (GitGCOff) as it may start git's housekeeping: read with them, it
// costs a write no git process of its own.
type evidenceSettings struct {
	signed bool  // borg.evidence = signed
	sign   bool  // borg's commits are signed: signed, or commit.gpgSign
	err    error // borg.evidence holds a value borg does not know
	gcOff  bool  // gc.auto = 0: the user turned git's automatic gc off
}

// settingsOnce caches a Store's evidence settings for its life (a command).
type settingsOnce struct {
	once sync.Once
	v    evidenceSettings
}

// settingsFile caches the settings between commands, with the files git
// read them from: while none of those files (nor git's configuration
// variables in the environment) has changed, a command reads the settings
// without starting git, which costs a recall a few milliseconds.
const settingsFile = cacheDir + "/git-settings.json"

type settingsCache struct {
	Stamp  string   `json:"stamp"`
	Files  []string `json:"files"`
	Signed bool     `json:"signed"`
	Sign   bool     `json:"sign"`
	Err    string   `json:"err,omitempty"`
	GCOff  bool     `json:"gc_off"`
}

// settingsFormat is part of the cache's stamp: a cache written before a
// setting was kept in it does not hold, and is read again from git.
const settingsFormat = "2"

// evidence reads borg.evidence and commit.gpgSign as git does (include
// files, the system config and GIT_CONFIG_* count, as for any git command
// in the store), from the cache when it still holds.
func (s *Store) evidence() evidenceSettings {
	s.settings.once.Do(func() {
		p := filepath.Join(s.dir, filepath.FromSlash(settingsFile))
		var c settingsCache
		if data, err := os.ReadFile(p); err == nil && json.Unmarshal(data, &c) == nil && c.Stamp != "" && c.Stamp == configStamp(c.Files) {
			s.settings.v = evidenceSettings{signed: c.Signed, sign: c.Sign, gcOff: c.GCOff}
			if c.Err != "" {
				s.settings.v.err = errors.New(c.Err)
			}
			return
		}
		v, files, err := s.readGitSettings()
		if err != nil {
			// A config git cannot read: fail closed.
			s.settings.v = evidenceSettings{signed: true, sign: true, err: fmt.Errorf("read borg.evidence from git config: %w", err)}
			return
		}
		s.settings.v = v
		c = settingsCache{Stamp: configStamp(files), Files: files, Signed: v.signed, Sign: v.sign, GCOff: v.gcOff}
		if v.err != nil {
			c.Err = v.err.Error()
		}
		if data, err := json.Marshal(c); err == nil && os.MkdirAll(filepath.Dir(p), 0o755) == nil {
			_ = writeAtomic(s, p, data) // a cache: one that cannot be written costs time only
		}
	})
	return s.settings.v
}

// readGitSettings asks git for its whole configuration as it applies in
// the store and returns the settings and the files they came from (with
// every other file git reads by default: the next stamp must notice one
// that appears).
func (s *Store) readGitSettings() (evidenceSettings, []string, error) {
	// Isolated: the store's config, whatever GIT_DIR the caller has set;
	// the hardening's own -c settings list as "command line:".
	out, err := Git{Dir: s.dir, Isolate: true, Env: []string{"LC_ALL=C"}}.Run(context.Background(), nil,
		"config", "--includes", "--show-origin", "--list", "-z")
	if err != nil {
		return evidenceSettings{}, nil, err
	}
	files := map[string]bool{}
	for _, f := range s.defaultConfigFiles() {
		files[f] = true
	}
	var pairs [][2]string
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		if f, ok := strings.CutPrefix(fields[i], "file:"); ok {
			if !filepath.IsAbs(f) {
				f = filepath.Join(s.dir, f)
			}
			files[f] = true
		}
		key, val, _ := strings.Cut(fields[i+1], "\n")
		pairs = append(pairs, [2]string{key, val})
	}
	list := make([]string, 0, len(files))
	for f := range files {
		list = append(list, f)
	}
	slices.Sort(list)
	return settingsFrom(pairs), list, nil
}

// defaultConfigFiles are the files git reads its configuration from when
// they exist (the system file at its usual place; a git built with another
// prefix names its own through --show-origin once it has entries).
func (s *Store) defaultConfigFiles() []string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	files := []string{"/etc/gitconfig"}
	for _, f := range []string{os.Getenv("GIT_CONFIG_SYSTEM"), os.Getenv("GIT_CONFIG_GLOBAL")} {
		if f != "" {
			files = append(files, f)
		}
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	if s.git != nil {
		files = append(files, filepath.Join(s.git.commonDir, "config"), filepath.Join(s.git.gitDir, "config.worktree"))
	}
	return files
}

// configStamp fingerprints files (each one's size and modification time,
// or its absence) and the environment variables that change what git
// reads.
func configStamp(files []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", settingsFormat)
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00", f)
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(h, "%d %d\x00", fi.Size(), fi.ModTime().UnixNano())
		} else {
			h.Write([]byte("-\x00"))
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_CONFIG") || k == "HOME" || k == "XDG_CONFIG_HOME" {
			fmt.Fprintf(h, "%s\x00", kv)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// settingsFrom reads the settings from git's key-value pairs, in git's
// order (the last value of a key wins, as in git).
func settingsFrom(pairs [][2]string) evidenceSettings {
	var v evidenceSettings
	gpgsign := false
	for _, kv := range pairs {
		key, val := strings.ToLower(kv[0]), strings.TrimSpace(kv[1])
		switch key {
		case "borg.evidence":
			switch strings.ToLower(val) {
			case "signed":
				v.signed, v.err = true, nil
			case "any", "":
				v.signed, v.err = false, nil
			default:
				// A typo must not turn the protection off.
				v.signed = true
				v.err = fmt.Errorf("git config borg.evidence is %q: set it to signed (count only evidence from verified signed commits) or any: git config --global borg.evidence signed", val)
			}
		case "commit.gpgsign":
			switch strings.ToLower(val) {
			case "true", "yes", "on", "1":
				gpgsign = true
			default:
				gpgsign = false
			}
		case "gc.auto":
			n, err := strconv.Atoi(val)
			v.gcOff = err == nil && n == 0
		}
	}
	v.sign = v.signed || gpgsign
	return v
}

// GitGCOff reports whether git's automatic gc is off in the store (git
// config gc.auto 0, the user's way of saying "never gc on your own"), from
// the settings borg caches between commands.
func (s *Store) GitGCOff() bool { return s.evidence().gcOff }

// SignedEvidence reports whether the store counts only evidence from
// signed commits (git config borg.evidence signed), and an error when the
// setting holds a value borg does not know (then it counts as signed).
func (s *Store) SignedEvidence() (bool, error) {
	v := s.evidence()
	return v.signed, v.err
}

// unsignedLabel is the run label of lines a signed-evidence refresh found
// in commits without a verified signature: their events are left out.
const unsignedLabel = "-"

// signatureCheck is what git says of one commit's signature.
type signatureCheck struct {
	ok     bool   // a good signature: what git verify-commit accepts
	signer string // the signer's identity (an email when it names one)
}

// gitVerifySignatures asks git, in one process, to verify the signatures of
// commits, as git verify-commit does (%G? is G or U: a good signature, of
// a valid or of an unknown-trust key; a bad, expired, revoked, unverifiable
// or missing one is not good), and asks more: the signature must name its
// signer.
func gitVerifySignatures(ctx context.Context, dir string, commits []string) (map[string]signatureCheck, error) {
	out := map[string]signatureCheck{}
	if len(commits) == 0 {
		return out, nil
	}
	in := strings.Join(commits, "\n") + "\n"
	raw, err := Git{Dir: dir, Isolate: true, Env: []string{"LC_ALL=C"}}.Run(ctx, strings.NewReader(in),
		"-c", "log.showSignature=false", "log", "--no-walk=unsorted", "--stdin", "--format=%H%x00%G?%x00%GS")
	if err != nil {
		return nil, fmt.Errorf("verify commit signatures: %w", err)
	}
	for line := range bytes.Lines(raw) {
		f := strings.Split(strings.TrimRight(string(line), "\n"), "\x00")
		if len(f) != 3 || !isHash(f[0]) {
			continue
		}
		// U with ssh is any key at all (no allowed signer matched, so no
		// signer name); with gpg, a key of the user's keyring whose owner
		// is named. Only a named signer counts.
		c := signatureCheck{signer: signerIdentity(f[2])}
		c.ok = (f[1] == "G" || f[1] == "U") && c.signer != ""
		out[f[0]] = c
	}
	return out, nil
}

// signerIdentity is who a verified signature stands for: the email in the
// signer's name ("Ann <ann@example.com>" for gpg, the principal of an ssh
// allowed-signers line), else the name as it is ("" for none).
func signerIdentity(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexByte(name, '<'); i >= 0 {
		if j := strings.IndexByte(name[i:], '>'); j > 0 {
			return strings.TrimSpace(name[i+1 : i+j])
		}
	}
	return name
}
