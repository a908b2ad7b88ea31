package main

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs"
)

func learnCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "learn",
		Usage:     "write a lesson to the store and commit it",
		ArgsUsage: `"gist"`,
		Description: "The gist is the lesson's one-line claim (at most 1,000 characters; the rest goes in --body).\n" +
			"borg writes lessons/<id>.html (the id is\n" +
			"read from the gist plus a short hash), records a created event and commits both.\n" +
			"Text that carries a secret (keys, tokens, passwords: gitleaks' rule set plus a few of\n" +
			"borg's own) is refused, and so is text that addresses the agent (\"ignore previous\n" +
			"instructions\", \"do not tell the user\", …): lessons are quoted to agents as data.",
		Flags: []cli.Flag{
			storeFlag(),
			jsonFlag(),
			&cli.StringFlag{Name: "body", Usage: "the lesson's body: why, evidence (`TEXT`, or - to read stdin)"},
			&cli.StringFlag{Name: "type", Value: domain.TypeSemantic, Usage: "episodic, semantic, procedural, arc, error_pattern, task, …"},
			&cli.IntFlag{Name: "importance", Usage: "1..10", DefaultText: "5"},
			&cli.StringFlag{Name: "reach", Value: domain.ReachTeam, Usage: "team, repo (the git repository of the working directory), or repo:<tag> (the repository whose top-level directory is <tag>)"},
			&cli.StringSliceFlag{Name: "tag", Usage: "a tag (repeatable)"},
			&cli.StringSliceFlag{Name: "anchor", Usage: "a code file the lesson is about (repeatable)"},
			&cli.StringFlag{Name: "title", Usage: "a title (default: none)"},
			&cli.Float64Flag{Name: "confidence", Value: 0.8, Usage: "confidence in [0,1]"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr(`learn takes one argument, the gist in quotes: borg learn "Run migrations before the tests"`)
			}
			if n := utf8.RuneCountInString(c.Args().First()); n > maxGistRunes {
				return usageErr("the gist is %d characters: say the lesson in one line of at most %d, and put the rest in --body", n, maxGistRunes)
			}
			opts := learnOptions{
				gist: c.Args().First(), body: c.String("body"), typ: c.String("type"),
				importance: c.Int("importance"), reach: c.String("reach"), tags: c.StringSlice("tag"),
				anchors: c.StringSlice("anchor"), title: c.String("title"), confidence: c.Float64("confidence"),
				json: c.Bool("json"),
			}
			if c.IsSet("importance") && opts.importance == 0 {
				return usageErr("--importance 0 is out of range: use 1..10")
			}
			if opts.body == "-" {
				// Read no more than a lesson can hold (and one byte to
				// tell): a runaway pipe is refused, not buffered whole.
				data, err := io.ReadAll(io.LimitReader(e.in, memfs.MaxLessonBytes+1))
				if err != nil {
					return fmt.Errorf("read body from stdin: %w", err)
				}
				if len(data) > memfs.MaxLessonBytes {
					// A refusal, as a lesson file over the limit is
					// (exit 3): the text is too long, not the command
					// mistyped.
					return fail(exitRefused, "refusing to learn: the body on stdin is over %d bytes, more than a lesson may hold: shorten it, or keep the detail in a file of the repository and pass it with --anchor", memfs.MaxLessonBytes)
				}
				opts.body = string(data)
			}
			// A learn in a large store allocates tens of megabytes
			// (most of it the lessons tree) and lives for tens of
			// milliseconds: collecting on the way is a measurable share
			// of it (BENCHMARKS.md). The collector runs only
			// past learnHeapLimit (and the settings are put back, for an
			// in-process caller).
			defer tuneGC(learnHeapLimit)()
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			return runLearn(e, s, opts)
		},
	}
}

type learnOptions struct {
	gist, body, typ, reach, title string
	importance                    int
	confidence                    float64
	tags, anchors                 []string
	json                          bool
}

// learnHeapLimit is the heap past which borg learn, the hooks and recall
// (short-lived processes, shortLived) collect garbage.
const learnHeapLimit = 512 << 20

// maxGistRunes bounds the gist a person learns: a lesson's gist is its
// claim in one line, what a hook quotes to the agent and a listing shows
// whole. (The evaluation's product path learns whole documents as gists
// through learnLesson, and is not bounded.)
const maxGistRunes = 1000

// runLearn writes, records and commits one lesson.
func runLearn(e *env, s *memfs.Store, o learnOptions) error {
	l, commit, err := learnLesson(e, s, o, true)
	if err != nil {
		return err
	}
	if len(l.Anchors) > 0 {
		// The commit hook finds the lesson's anchors in this cache (the
		// index's sync keeps it otherwise): a commit right after the
		// learn is then noted too. A cache: a failure costs a note.
		_ = s.UpdateAnchors([]domain.Lesson{l}, nil, false)
	}
	if l.Author == "" {
		// Learned all the same, but no one's: the team cannot tell
		// whose lesson it is, nor count it towards anyone's.
		fmt.Fprintln(e.err, "borg: this lesson has no author: borg knows no engineer here; set git config --global user.email, or BORG_ENGINEER")
	}
	housekeep(e, s)
	if o.json {
		return writeJSON(e, map[string]string{"id": l.ID, "path": memfs.LessonPath(l.ID), "commit": commit})
	}
	_, err = fmt.Fprintf(e.out, "learned %s (%s)\n", l.ID, memfs.LessonPath(l.ID))
	return err
}

// screenLearnInput refuses a lesson any field of which carries a secret or
// reads as an instruction.
func screenLearnInput(o learnOptions) error {
	// Each field is screened as memfs.Screen reads it (folded: Unicode
	// spaces, fullwidth and look-alike letters, entities), so text the
	// codec would canonicalise into a secret or an order is refused here.
	for _, f := range []struct{ name, text string }{
		{"gist", o.gist}, {"body", o.body}, {"title", o.title}, {"reach", o.reach},
		{"tags", strings.Join(o.tags, " ")}, {"anchors", strings.Join(o.anchors, " ")},
	} {
		if v := memfs.ScreenField(f.name, f.text); memfs.IsSecretVerdict(v) {
			return fail(exitRefused, "refusing to learn: the %s carries a %s; remove it and run borg learn again", f.name, strings.TrimSuffix(v, " in the "+f.name))
		} else if v != "" {
			return fail(exitRefused, "refusing to learn: the %s reads as an instruction to the agent (%s), which borg never quotes to one; say the lesson as a fact or a practice", f.name, strings.TrimSuffix(strings.TrimPrefix(v, "instruction-like text ("), ") in the "+f.name))
		}
	}
	return nil
}

// checkLearnOptions refuses bad input (text that is not UTF-8, an empty
// gist, --importance out of range, an unknown reach) and returns the
// lesson's reach, with repo the repository tag of a --reach repo.
func checkLearnOptions(o learnOptions, repo string) (string, error) {
	for _, f := range []struct{ name, text string }{{"gist", o.gist}, {"body", o.body}, {"title", o.title}} {
		if !utf8.ValidString(f.text) {
			return "", usageErr("the %s is not UTF-8 text: save it as UTF-8 and run borg learn again", f.name)
		}
	}
	if strings.TrimSpace(o.gist) == "" {
		return "", usageErr("the gist is empty: say the lesson in one line")
	}
	if o.importance != 0 && (o.importance < 1 || o.importance > 10) {
		return "", usageErr("--importance %d is out of range: use 1..10", o.importance)
	}
	if o.confidence < 0 || o.confidence > 1 || math.IsNaN(o.confidence) {
		return "", usageErr("--confidence %v is out of range: use 0..1", o.confidence)
	}
	if !domain.ValidType(o.typ) {
		return "", usageErr("--type %q: a lower-case word or words joined by _, such as semantic, procedural or error_pattern", o.typ)
	}
	reach := o.reach
	switch {
	case reach == "" || reach == domain.ReachTeam:
		reach = domain.ReachTeam
	case reach == "repo":
		if repo == "" {
			return "", usageErr("--reach repo needs a git repository: run borg learn from inside the repository the lesson is about")
		}
		reach = domain.ReachRepoPrefix + repo
	case strings.HasPrefix(reach, domain.ReachRepoPrefix):
		// Another repository's, named from outside it: its tag is a
		// directory's name, one word.
		if !domain.ValidRepoTag((domain.Lesson{Reach: reach}).RepoTag()) {
			return "", usageErr("--reach %q: a repository's tag is the name of its top-level directory, without a slash, spaces or commas (repo:payments)", reach)
		}
	default:
		return "", usageErr("--reach %q: use team, repo, or repo:<tag>", reach)
	}
	return reach, nil
}

// learnLesson is borg learn's work: refuse secrets and bad input, write the
// lesson, record its created event and, with commit, commit the lesson (the
// commit's hash is returned; the event goes with the log's next commit).
// Without commit the caller commits the lesson's path and the log (eval's
// product path commits a corpus at once).
func learnLesson(e *env, s *memfs.Store, o learnOptions, commit bool) (domain.Lesson, string, error) {
	repo := repoTag()
	reach, badOption := checkLearnOptions(o, repo)
	var pending *memfs.Pending
	if badOption == nil && commit {
		// The commit begins now if the store is free, so that git reads
		// a big store's index while the lesson is screened and its claim
		// looked up (the commit's longest step, BENCHMARKS.md); refused,
		// it writes nothing. A store another writer holds, or one that
		// cannot be written, is met by the commit below, after the
		// checks: a lesson refused is refused at once.
		if p, err := s.Begin(1); err == nil {
			pending = p
			defer pending.Abort() // nothing once the commit has ended
		}
	}
	// A secret or an instruction is named before a bad option.
	if err := screenLearnInput(o); err != nil {
		return domain.Lesson{}, "", err
	}
	if badOption != nil {
		return domain.Lesson{}, "", badOption
	}
	anchors, err := resolveAnchors(o.anchors)
	if err != nil {
		return domain.Lesson{}, "", err
	}
	now := e.now().UTC()
	l := domain.Lesson{
		ID: lessonID(o.gist), Title: o.title, Type: o.typ, Confidence: o.confidence,
		Importance: o.importance, Reach: reach, Author: engineer(e), Created: now,
		Tags: o.tags, Anchors: anchors, Gist: o.gist, Body: o.body,
	}
	if err := memfs.Validate(l); err != nil {
		return domain.Lesson{}, "", invalidLesson(err)
	}
	if v := memfs.Screen(l); v != "" {
		// The fields passed one by one; together (the id) they did not.
		return domain.Lesson{}, "", fail(exitRefused, "refusing to learn: %s; reword the gist and run borg learn again", v)
	}
	// The id: the claim's, unless another claim holds it (gistLesson); the
	// write below checks it again under the store's write lock.
	found, free, err := gistLesson(s, l.Gist)
	switch {
	case err != nil:
		return domain.Lesson{}, "", err
	case found != "":
		return domain.Lesson{}, "", fail(exitRefused, "lesson %s already says this (see borg show %s); change the gist to write another", found, found)
	case free != l.ID:
		// A longer hash, screened as the first id was.
		l.ID = free
		if v := memfs.Screen(l); v != "" {
			return domain.Lesson{}, "", fail(exitRefused, "refusing to learn: %s; reword the gist and run borg learn again", v)
		}
	}
	ev := domain.Event{
		MS: now.UnixMilli(), Kind: domain.KindCreated, Lesson: l.ID, Repo: repo,
		Author: l.Author, Session: e.getenv("BORG_SESSION"),
	}
	// write checks that no lesson says this yet, then writes the lesson and
	// its created event. With commit it runs under the store's write lock,
	// so of parallel learns of one gist exactly one writes and the others
	// are refused; a kill after it is finished by the next writer.
	write := func() error {
		// The created event needs this machine's node id: a store that
		// cannot give one is refused before the lesson is written, so no
		// lesson file is left behind without its event.
		if _, err := s.Node(); err != nil {
			return fail(exitFail, "%v", err)
		}
		if other, err := s.Lesson(l.ID); err == nil {
			if claimKey(other.Gist) != claimKey(l.Gist) {
				// Taken by another claim since the id was chosen.
				return fail(exitFail, "lesson %s was written by another borg meanwhile with another claim; run borg learn again", l.ID)
			}
			return fail(exitRefused, "lesson %s already says this (see borg show %s); change the gist to write another", l.ID, l.ID)
		} else if !errors.Is(err, memfs.ErrNotFound) {
			return fail(exitFail, "lesson %s exists but cannot be read: %v (run borg doctor)", l.ID, err)
		}
		if err := s.WriteLesson(l); err != nil {
			return invalidLesson(err)
		}
		if err := s.Append(ev); err != nil {
			// Undone: a retry must not find a half-learned lesson that
			// "already says this".
			_ = os.Remove(filepath.Join(s.Dir(), filepath.FromSlash(memfs.LessonPath(l.ID))))
			return fail(exitFail, "record the lesson's created event: %v (nothing was learned; run borg learn again once it is fixed)", err)
		}
		return nil
	}
	if !commit {
		if err := write(); err != nil {
			return domain.Lesson{}, "", err
		}
		return l, "", nil
	}
	// The commit holds the lesson only. Its created event waits in this
	// node's log with the hooks' events until borg sync commits them: the
	// log is one file per node that only grows, and git stores each version
	// whole, so committing it here made every learn cost the log's size (a
	// second and 140 MB of objects per learn at 1,000,000 events).
	paths := []string{memfs.LessonPath(l.ID)}
	wrote := false
	update := s.Update
	if pending != nil {
		update = pending.Update
	}
	hash, err := update("borg learn: "+l.ID, paths, func() error {
		err := write()
		wrote = err == nil
		if wrote {
			// Screened above: the hook that first indexes the lesson
			// need not screen it again. Recorded under the write lock,
			// so that two learns do not race on the file.
			recordScreened(s, l)
		}
		return err
	})
	if err != nil && !wrote {
		return domain.Lesson{}, "", err
	}
	if se, ok := errors.AsType[*memfs.StageError](err); ok {
		// Learned and committed: only git's index lags, which the next
		// write stages. Said, not failed: nothing is to be done again.
		fmt.Fprintf(e.err, "borg: %v (the next borg write or borg doctor --fix updates it)\n", se)
		return l, se.Commit, nil
	}
	if err != nil {
		return domain.Lesson{}, "", fail(exitFail, "lesson written to %s but not committed: %v (the next borg learn or borg doctor --fix commits it)", memfs.LessonPath(l.ID), err)
	}
	return l, hash, nil
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true,
	"for": true, "and": true, "or": true, "is": true, "are": true, "be": true, "with": true,
	"by": true, "at": true, "it": true, "this": true, "that": true, "as": true, "from": true,
}

// lessonID is a readable id: up to five words of the gist, then four hex of
// a hash of the gist, so the same claim always gets the same id. Both come
// from the gist's normal form (memfs.NormalGist), the text the screen read:
// the same claim in another Unicode normal form or spacing is the same
// lesson, and is refused as a duplicate. Claims that open with the same
// words share the slug, and one in 65,536 pairs the hash too: the second
// such claim takes a longer hash (lessonIDs, gistLesson).
func lessonID(gist string) string { return lessonIDs(gist)[0] }

// idHashLens are the lengths, in bytes, of the hash an id may end with:
// the shortest that no other claim holds (gistLesson).
var idHashLens = []int{2, 4, 8}

// lessonIDs is the ids a gist may have, shortest hash first. The slug
// reads the gist's letters without their accents (memfs.Fold: "café" is
// cafe), the hash the gist as written.
func lessonIDs(gist string) []string {
	norm := memfs.NormalGist(gist)
	return gistIDs(norm, strings.ToLower(memfs.Fold(norm)))
}

// legacyLessonIDs is the ids lessonIDs gave before its slug folded accents
// (a word with an accented letter split at it): a lesson learned then keeps
// its id, and gistLesson still finds it.
func legacyLessonIDs(gist string) []string {
	norm := memfs.NormalGist(gist)
	return gistIDs(norm, norm)
}

// gistIDs is the ids of the gist of normal form norm, slugged from text.
func gistIDs(norm, text string) []string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	var kept []string
	n := 0
	for _, w := range words {
		if stopWords[w] || len(kept) == 5 || n+len(w) > 40 || tokenLike(w) {
			continue
		}
		kept = append(kept, w)
		n += len(w) + 1
	}
	slug := strings.Join(kept, "-")
	if slug == "" || !unicode.IsLetter(rune(slug[0])) {
		slug = strings.TrimSuffix("lesson-"+slug, "-")
	}
	sum := sha256.Sum256([]byte(norm))
	ids := make([]string, len(idHashLens))
	for i, n := range idHashLens {
		ids[i] = slug + "-" + hex.EncodeToString(sum[:n])
	}
	return ids
}

// gistLesson finds where the store holds gist's claim: found is the id of
// the lesson that says it (its gist has the same normal form), or "" with
// free, the id a new lesson of it takes: the first of lessonIDs that no
// lesson holds. Another claim's lesson at an id is passed over.
func gistLesson(s *memfs.Store, gist string) (found, free string, err error) {
	key := claimKey(gist)
	// The claim may sit under the ids of another spelling of it: the slug
	// of before accents were folded, or the sentence with or without its
	// closing stop.
	for _, g := range append(otherSpellings(gist), gist) {
		for _, ids := range [][]string{legacyLessonIDs(g), lessonIDs(g)} {
			if g == gist && ids[0] == lessonIDs(gist)[0] {
				continue // read below
			}
			for _, id := range ids {
				l, err := s.Lesson(id)
				if err != nil {
					break // none there (or unreadable: the ids below say so)
				}
				if claimKey(l.Gist) == key {
					return id, "", nil
				}
			}
		}
	}
	for _, id := range lessonIDs(gist) {
		l, err := s.Lesson(id)
		switch {
		case errors.Is(err, memfs.ErrNotFound):
			return "", id, nil
		case err != nil:
			return "", "", fail(exitFail, "lesson %s exists but cannot be read: %v (run borg doctor)", id, err)
		case claimKey(l.Gist) == key:
			return id, "", nil
		}
	}
	ids := lessonIDs(gist)
	return "", "", fail(exitFail, "lessons %s hold other claims under every id this gist may take; reword the gist", strings.Join(ids, ", "))
}

// claimKey is what two gists that say one claim share: the normal form
// without the stop that closes the sentence ("… VPN access first." and
// "… vpn access first" are one claim).
func claimKey(gist string) string {
	return strings.TrimRight(memfs.NormalGist(gist), ".!;: ")
}

// otherSpellings are the gists a claim's lesson may have been learned
// under other than gist: the sentence without its closing stop, and with
// a period or an exclamation mark.
func otherSpellings(gist string) []string {
	base := strings.TrimRight(strings.TrimSpace(gist), ".!;: ")
	var out []string
	for _, g := range []string{base, base + ".", base + "!"} {
		if g != gist && g != "" && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// tokenLike reports whether a word of the gist may be a fragment of a
// credential the scanner did not recognise (a run of 8 or more characters
// with a digit in it, or of 20 or more): such words never go into an id,
// which is shown everywhere, quoted to agents and committed as a file name.
func tokenLike(w string) bool {
	return len(w) >= 20 || len(w) >= 8 && strings.ContainsAny(w, "0123456789")
}

// resolveAnchors turns each --anchor path into path@<blob sha> relative to
// its git repository's root (the blob sha of the file as it is now), or the
// path as given when it is not in a repository.
func resolveAnchors(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if strings.ContainsAny(p, ",\n") {
			return nil, usageErr("--anchor %q: a path with a comma or a newline cannot be an anchor", p)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(abs)
		if err != nil {
			return nil, usageErr("--anchor %s: %v (anchor a file that exists)", p, err)
		}
		// An anchor names a file of a project as its repository does: a
		// path outside one could never match a commit, and would put a
		// machine's local path in the team's store.
		top := memfs.GitToplevel(filepath.Dir(abs))
		if top == "" {
			return nil, usageErr("--anchor %s: not in a git repository (anchor a file of the project the lesson is about)", p)
		}
		r, err := filepath.Rel(top, abs)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return nil, usageErr("--anchor %s: outside its repository %s (anchor a file of the project)", p, top)
		}
		if a := filepath.ToSlash(r) + "@" + blobSHA(data); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// blobSHA is git's object id of a blob with this content.
func blobSHA(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}
