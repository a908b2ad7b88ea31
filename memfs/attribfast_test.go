package memfs

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/memfs/gitobj"
)

// attribSnapshot renders the cached attribution (runs, commits and every
// line's commit) so two refreshes can be compared.
func attribSnapshot(t *testing.T, s *Store) string {
	t.Helper()
	st := s.readAttribState()
	if st == nil {
		t.Fatal("no attribution cached")
	}
	commits, lines := s.readAttribLines(st.Commit)
	if lines == nil {
		t.Fatal("no line table cached")
	}
	defer lines.close()
	var b strings.Builder
	// A stamp records a stat taken once the file is old enough
	// (racyWindow): two refreshes a moment apart may differ in it alone.
	for _, fa := range st.Files {
		fa.Stamp = ""
	}
	files, _ := json.Marshal(st.Files)
	fmt.Fprintf(&b, "commit %s\nfiles %s\n", st.Commit, files)
	for _, c := range commits {
		fmt.Fprintf(&b, "c %s %s %d\n", c.Hash, c.Author, c.MS)
	}
	var keys []string
	lines.each(func(k lineKey, c uint32) {
		keys = append(keys, fmt.Sprintf("%s %d", hex.EncodeToString(k[:]), c))
	})
	slices.Sort(keys)
	b.WriteString(strings.Join(keys, "\n"))
	return b.String()
}

// TestAttributionFastPathMatchesGit plays a random history of appends (by
// borg and by the git CLI), rewrites, merges and forged claims, and after
// each step refreshes twice from the same cached state: once as commands do
// (the in-process append check, falling back to git) and once through git
// log -p only. Both must cache the same attribution, and the fast path must
// have been taken.
func TestAttributionFastPathMatchesGit(t *testing.T) {
	emails := []string{"ada@example.com", "bob@example.com", "eve@example.com"}
	nodes := []string{"log/n-a.jsonl", "log/n-b.jsonl", "log/n-c.jsonl"}
	s := newTestStore(t)
	ctx := context.Background()
	if err := s.refreshAttribution(ctx); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 11))
	ms := int64(0)
	line := func() string {
		ms++
		e := claim(ms, domain.KindChanged, fmt.Sprint("s", r.IntN(40)), emails[r.IntN(len(emails))])
		return eventLines([]domain.Event{e})[0] + "\n"
	}
	read := func(dir, name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		return string(b)
	}
	write := func(dir, name, content string) {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One file large enough that borg stores its blobs raw (compared in
	// place), the others compressed (hashed).
	var big strings.Builder
	for range 1500 {
		big.WriteString(line())
	}
	write(s.Dir(), nodes[0], big.String())
	if _, err := s.Commit("big", nodes[0]); err != nil {
		t.Fatal(err)
	}
	cacheFiles := []string{attribFile, attribLinesFile, attribTailFile}
	defer func(n int) { tailMergeAt = n }(tailMergeAt)
	tailMergeAt = 6 // the tail is merged into a new base now and then
	fastBefore := fastAttribUsed.Load()
	for step := range 40 {
		for range 1 + r.IntN(3) {
			who := emails[r.IntN(len(emails))]
			name := nodes[r.IntN(len(nodes))]
			switch op := r.IntN(10); {
			case op < 4: // borg appends and commits
				write(s.Dir(), name, read(s.Dir(), name)+line()+line())
				if _, err := s.Commit("append", name); err != nil {
					t.Fatal(err)
				}
			case op < 7: // the git CLI commits an append
				write(s.Dir(), name, read(s.Dir(), name)+line())
				gitAs(t, s.Dir(), who, "add", "log")
				gitAs(t, s.Dir(), who, "commit", "-qm", "append", "--allow-empty")
			case op < 8: // a rewrite: lines reordered, one slipped in
				old := strings.SplitAfter(read(s.Dir(), name), "\n")
				r.Shuffle(len(old), func(i, j int) { old[i], old[j] = old[j], old[i] })
				write(s.Dir(), name, line()+strings.Join(old, ""))
				gitAs(t, s.Dir(), who, "add", "log")
				gitAs(t, s.Dir(), who, "commit", "-qm", "rewrite", "--allow-empty")
			default: // a merge of a clone's append with one here
				other := filepath.Join(t.TempDir(), "clone")
				gitAs(t, filepath.Dir(other), who, "clone", "-q", s.Dir(), other)
				write(other, nodes[0], read(other, nodes[0])+line())
				gitAs(t, other, who, "add", "log")
				gitAs(t, other, who, "commit", "-qm", "there")
				write(s.Dir(), nodes[1], read(s.Dir(), nodes[1])+line())
				gitAs(t, s.Dir(), who, "add", "log")
				gitAs(t, s.Dir(), who, "commit", "-qm", "here")
				gitAs(t, s.Dir(), who, "pull", "-q", "--no-rebase", "--no-edit", other, "HEAD")
			}
		}
		saved := map[string][]byte{}
		for _, f := range cacheFiles {
			saved[f], _ = os.ReadFile(filepath.Join(s.Dir(), filepath.FromSlash(f)))
		}
		attribSlowOnly = true
		err := s.refreshAttribution(ctx)
		attribSlowOnly = false
		if err != nil {
			t.Fatal(err)
		}
		slow := attribSnapshot(t, s)
		for _, f := range cacheFiles {
			if err := os.WriteFile(filepath.Join(s.Dir(), filepath.FromSlash(f)), saved[f], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.refreshAttribution(ctx); err != nil {
			t.Fatal(err)
		}
		if fast := attribSnapshot(t, s); fast != slow {
			t.Fatalf("step %d: the fast path cached\n%s\n\ngit log -p cached\n%s", step, fast, slow)
		}
	}
	t.Logf("the fast path served %d of 40 refreshes", fastAttribUsed.Load()-fastBefore)
	if fastAttribUsed.Load() == fastBefore {
		t.Fatal("the fast path was never taken")
	}
}

// TestAttributionFastPathRefusesRewrite: a commit whose blob is not its
// parent's followed by new lines is not taken as an append.
func TestAttributionFastPathRefusesRewrite(t *testing.T) {
	const ada, eve = "ada@example.com", "eve@example.com"
	s := newTestStore(t)
	writeLog(t, s, "log/n-ada.jsonl", []domain.Event{claim(1, domain.KindChanged, "s1", ada), claim(2, domain.KindChanged, "s2", ada)})
	gitAs(t, s.Dir(), ada, "add", "log")
	gitAs(t, s.Dir(), ada, "commit", "-qm", "ada")
	from := gitAs(t, s.Dir(), ada, "rev-parse", "HEAD")
	// Eve changes one byte inside Ada's lines and appends one of hers.
	p := filepath.Join(s.Dir(), "log", "n-ada.jsonl")
	data := readFile(t, p)
	data = bytes.Replace(data, []byte(HashSession("s1")), []byte(HashSession("s9")), 1)
	data = append(data, eventLines([]domain.Event{claim(3, domain.KindChanged, "s3", ada)})[0]+"\n"...)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gitAs(t, s.Dir(), eve, "commit", "-qam", "eve")
	head := gitAs(t, s.Dir(), eve, "rev-parse", "HEAD")
	if _, err := s.fastAdded(from, head); err != errSlowPath {
		t.Fatalf("fast path on a rewrite: %v, want errSlowPath", err)
	}
	// An append is taken, with the line git would report.
	data = append(data, eventLines([]domain.Event{claim(4, domain.KindChanged, "s4", ada)})[0]+"\n"...)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gitAs(t, s.Dir(), eve, "commit", "-qam", "eve again")
	added, err := s.fastAdded(head, gitAs(t, s.Dir(), eve, "rev-parse", "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range added {
		got = append(got, a.Email+" "+string(a.Line))
	}
	want := []string{eve + " " + eventLines([]domain.Event{claim(4, domain.KindChanged, "s4", ada)})[0]}
	if !slices.Equal(got, want) {
		t.Fatalf("added %q, want %q", got, want)
	}
}

// TestAttribLinesTornOrLegacy: a line table torn or of another base is
// never trusted (the attribution is computed again, the same), and one in
// the format before the tail is read as it was.
func TestAttribLinesTornOrLegacy(t *testing.T) {
	const ada, eve = "ada@example.com", "eve@example.com"
	s := newTestStore(t)
	ctx := context.Background()
	writeLog(t, s, "log/n-ada.jsonl", []domain.Event{claim(1, domain.KindChanged, "s1", ada), claim(2, domain.KindChanged, "s2", eve)})
	gitAs(t, s.Dir(), ada, "add", "log")
	gitAs(t, s.Dir(), ada, "commit", "-qm", "ada")
	if err := s.refreshAttribution(ctx); err != nil {
		t.Fatal(err)
	}
	want := attribSnapshot(t, s)
	path := func(f string) string { return filepath.Join(s.Dir(), filepath.FromSlash(f)) }
	damage := []struct {
		name string
		do   func()
	}{
		{"tail cut short", func() {
			data := readFile(t, path(attribTailFile))
			_ = os.WriteFile(path(attribTailFile), data[:len(data)-3], 0o644)
		}},
		{"base cut short", func() {
			data := readFile(t, path(attribLinesFile))
			_ = os.WriteFile(path(attribLinesFile), data[:len(data)-20], 0o644)
		}},
		{"base of another refresh", func() {
			data := readFile(t, path(attribLinesFile))
			_ = os.WriteFile(path(attribLinesFile), bytes.Replace(data, []byte(`"base":"`), []byte(`"base":"x`), 1), 0o644)
		}},
	}
	for _, d := range damage {
		d.do()
		if _, l := s.readAttribLines(s.readAttribState().Commit); l != nil {
			l.close()
			t.Fatalf("%s: the line table was trusted", d.name)
		}
		// Untrusted, it is rebuilt once the state is (HEAD moves, or the
		// state is gone).
		_ = os.Remove(path(attribFile))
		if err := s.refreshAttribution(ctx); err != nil {
			t.Fatal(err)
		}
		if got := attribSnapshot(t, s); got != want {
			t.Fatalf("%s: attribution\n%s\nwant\n%s", d.name, got, want)
		}
	}
	// A commit index out of range (a corrupt base, checked as records
	// are looked up) is never returned: doctor's read fails, and a
	// refresh that meets one computes the attribution again.
	corrupt := func() {
		data := readFile(t, path(attribLinesFile))
		for i := len(data) - 1; i > len(data)-1-2*attribRecord; i -= attribRecord {
			data[i] = 0xff
		}
		if err := os.WriteFile(path(attribLinesFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	corrupt()
	if err := s.CommittedLines(ctx, func(CommittedLine) {}); err == nil {
		t.Fatal("CommittedLines read a corrupt line table without an error")
	}
	if err := s.refreshAttribution(ctx); err != nil {
		t.Fatal(err)
	}
	if got := attribSnapshot(t, s); got != want {
		t.Fatalf("after a corrupt table: attribution\n%s\nwant\n%s", got, want)
	}
	corrupt()
	// Eve commits a copy of every line: each is looked up.
	dup := readFile(t, path("log/n-ada.jsonl"))
	if err := os.WriteFile(path("log/n-eve.jsonl"), dup, 0o644); err != nil {
		t.Fatal(err)
	}
	gitAs(t, s.Dir(), eve, "add", "log")
	gitAs(t, s.Dir(), eve, "commit", "-qm", "eve copies")
	if err := s.refreshAttribution(ctx); err != nil {
		t.Fatal(err)
	}
	got := attribSnapshot(t, s)
	_ = os.Remove(path(attribFile))
	attribSlowOnly = true
	err := s.refreshAttribution(ctx)
	attribSlowOnly = false
	if err != nil {
		t.Fatal(err)
	}
	if want = attribSnapshot(t, s); got != want {
		t.Fatalf("a refresh meeting a corrupt table: attribution\n%s\nwant, from scratch,\n%s", got, want)
	}
	// The format before the tail: one file, the tail's header and every
	// record.
	st := s.readAttribState()
	commits, l := s.readAttribLines(st.Commit)
	head, _ := json.Marshal(tailHeader{Commit: st.Commit, Commits: commits})
	legacy := append(append(head, '\n'), mergeRecords(l.main, l.tail)...)
	l.close()
	if err := os.WriteFile(path(attribLinesFile), legacy, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(path(attribTailFile))
	if got := attribSnapshot(t, s); got != want {
		t.Fatalf("legacy table read as\n%s\nwant\n%s", got, want)
	}
	writeLog(t, s, "log/n-ada.jsonl", []domain.Event{claim(1, domain.KindChanged, "s1", ada), claim(2, domain.KindChanged, "s2", eve), claim(3, domain.KindChanged, "s3", ada)})
	gitAs(t, s.Dir(), eve, "commit", "-qam", "eve")
	before := fastAttribUsed.Load()
	if err := s.refreshAttribution(ctx); err != nil {
		t.Fatal(err)
	}
	if fastAttribUsed.Load() == before {
		t.Fatal("the refresh from a legacy table did not go on incrementally")
	}
	if _, err := os.Stat(path(attribTailFile)); err != nil {
		t.Fatalf("no tail written after a legacy table: %v", err)
	}
	if got := authorsBySession(t, s); got[HashSession("s3")] != HashEngineer(eve) || got[HashSession("s2")] != HashEngineer(ada) {
		t.Fatalf("authors after the legacy table: %v", got)
	}
}

// TestAttributionFastPathStoredBlobs: log files large enough that borg
// stores their blobs uncompressed are compared with the parent's blob in
// place; an append is taken, a byte changed anywhere is not.
func TestAttributionFastPathStoredBlobs(t *testing.T) {
	const ada = "ada@example.com"
	s := newTestStore(t)
	const name = "log/n-ada.jsonl"
	p := filepath.Join(s.Dir(), filepath.FromSlash(name))
	var data []byte
	for i := range 2000 {
		data = append(data, eventLines([]domain.Event{claim(int64(i), domain.KindChanged, fmt.Sprint("s", i), ada)})[0]+"\n"...)
	}
	if len(data) < 3*gitobj.StoreRawAbove {
		t.Fatalf("log of %d bytes: too small to be stored raw over several blocks", len(data))
	}
	commit := func(content []byte) string {
		t.Helper()
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := s.Commit("log", name)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := commit(data)
	more := eventLines([]domain.Event{claim(9000, domain.KindChanged, "new", ada)})[0]
	appended := commit(append(slices.Clone(data), more+"\n"...))
	added, err := s.fastAdded(base, appended)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 1 || string(added[0].Line) != more {
		t.Fatalf("added %d lines, want the one appended", len(added))
	}
	oldBlob := gitAs(t, s.Dir(), ada, "rev-parse", base+":"+name)
	newBlob := gitAs(t, s.Dir(), ada, "rev-parse", appended+":"+name)
	if _, ok, err := s.storedTail(hashOf(newBlob), hashOf(oldBlob), int64(len(data))); !ok || err != nil {
		t.Fatalf("stored blobs not compared in place: %v %v", ok, err)
	}
	for _, at := range []int{10, len(data) / 2, len(data) - 2} {
		bad := append(slices.Clone(data), more+"\n"...)
		bad[at] ^= 1
		commit(data)
		before := s.headCommit()
		after := commit(bad)
		if _, err := s.fastAdded(before, after); err != errSlowPath {
			t.Fatalf("byte %d changed: %v, want errSlowPath", at, err)
		}
	}
}
