package memfs

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

// TestColdAttributionMatchesGit plays random histories of appends (by borg
// and by the git CLI), merges, lines copied from one file to another or
// repeated, blank lines, and lines written but not committed (some copies
// of committed ones), and after each step attributes the whole history
// from scratch twice: through git log -p, and as a fresh clone does (the
// cold path). Both must cache the same attribution. Histories with a
// rewrite, a truncation or a deleted file must leave the cold path for git
// log -p, and still agree.
func TestColdAttributionMatchesGit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		seed    uint64
		rewrite bool // some steps rewrite history's files
	}{
		{"appends", 1, false},
		{"appends-2", 2, false},
		{"rewrites", 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			playColdHistory(t, tc.seed, tc.rewrite)
		})
	}
}

func playColdHistory(t *testing.T, seed uint64, rewrite bool) {
	emails := []string{"ada@example.com", "bob@example.com", "eve@example.com"}
	nodes := []string{"log/n-a.jsonl", "log/n-b.jsonl", "log/n-c.jsonl", "log/n-a~0001.jsonl"}
	s := newTestStore(t)
	ctx := context.Background()
	r := rand.New(rand.NewPCG(seed, 17))
	ms := int64(0)
	line := func() string {
		ms++
		e := claim(ms, domain.KindChanged, fmt.Sprint("s", r.IntN(40)), emails[r.IntN(len(emails))])
		return eventLines([]domain.Event{e})[0] + "\n"
	}
	path := func(dir, name string) string { return filepath.Join(dir, filepath.FromSlash(name)) }
	read := func(dir, name string) string {
		b, _ := os.ReadFile(path(dir, name))
		return string(b)
	}
	write := func(dir, name, content string) {
		if err := os.WriteFile(path(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A line some file holds, to copy (whitespace around it or not).
	someLine := func(dir string) string {
		for range 8 {
			if ls := strings.SplitAfter(read(dir, nodes[r.IntN(len(nodes))]), "\n"); len(ls) > 1 {
				l := ls[r.IntN(len(ls)-1)]
				if r.IntN(3) == 0 {
					l = "  " + strings.TrimSuffix(l, "\n") + " \n"
				}
				return l
			}
		}
		return line()
	}
	commitAs := func(dir, who, msg string) {
		gitAs(t, dir, who, "add", "log")
		gitAs(t, dir, who, "commit", "-qm", msg, "--allow-empty")
	}
	write(s.Dir(), nodes[0], line()+line())
	if _, err := s.Commit("first", nodes[0]); err != nil {
		t.Fatal(err)
	}
	cacheFiles := []string{attribFile, attribLinesFile, attribTailFile}
	fromScratch := func(slow bool) string {
		for _, f := range cacheFiles {
			if err := os.Remove(path(s.Dir(), f)); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		attribSlowOnly = slow
		defer func() { attribSlowOnly = false }()
		if err := s.refreshAttribution(ctx); err != nil {
			t.Fatal(err)
		}
		return attribSnapshot(t, s)
	}
	coldBefore := coldAttribUsed.Load()
	rewritten := false
	for step := range 30 {
		who := emails[r.IntN(len(emails))]
		name := nodes[r.IntN(len(nodes))]
		switch op := r.IntN(12); {
		case op < 3: // borg appends and commits
			write(s.Dir(), name, read(s.Dir(), name)+line()+line())
			if _, err := s.Commit("append", name); err != nil {
				t.Fatal(err)
			}
		case op < 5: // the git CLI commits an append, a copied line in it
			write(s.Dir(), name, read(s.Dir(), name)+line()+someLine(s.Dir()))
			commitAs(s.Dir(), who, "append")
		case op < 6: // a blank line and a repeated one
			l := line()
			write(s.Dir(), name, read(s.Dir(), name)+l+"\n"+l)
			commitAs(s.Dir(), who, "blank")
		case op < 8: // written, not committed: new lines and a copy
			write(s.Dir(), name, read(s.Dir(), name)+line()+someLine(s.Dir()))
		case op < 10: // a merge of a clone's appends with one here
			other := filepath.Join(t.TempDir(), "clone")
			commitAs(s.Dir(), who, "before the merge")
			gitAs(t, filepath.Dir(other), who, "clone", "-q", s.Dir(), other)
			write(other, nodes[0], read(other, nodes[0])+line()+someLine(other))
			commitAs(other, emails[r.IntN(len(emails))], "there")
			write(s.Dir(), nodes[1], read(s.Dir(), nodes[1])+line())
			commitAs(s.Dir(), who, "here")
			gitAs(t, s.Dir(), who, "pull", "-q", "--no-rebase", "--no-edit", other, "HEAD")
		default:
			if !rewrite {
				continue
			}
			old := strings.SplitAfter(read(s.Dir(), name), "\n")
			switch r.IntN(3) {
			case 0: // lines reordered, one slipped in
				r.Shuffle(len(old), func(i, j int) { old[i], old[j] = old[j], old[i] })
				write(s.Dir(), name, line()+strings.Join(old, ""))
			case 1: // the last lines cut off
				write(s.Dir(), name, strings.Join(old[:len(old)/2], ""))
			default: // the file deleted
				_ = os.Remove(path(s.Dir(), name))
			}
			commitAs(s.Dir(), who, "rewrite")
			rewritten = true
		}
		slow := fromScratch(true)
		cold := coldAttribUsed.Load()
		if fast := fromScratch(false); fast != slow {
			t.Fatalf("step %d: from scratch, the cold path cached\n%s\n\ngit log -p cached\n%s", step, fast, slow)
		}
		if !rewritten && coldAttribUsed.Load() == cold {
			t.Fatalf("step %d: a history of appends went to git log -p", step)
		}
	}
	t.Logf("the cold path served %d of 30 walks", coldAttribUsed.Load()-coldBefore)
	if rewrite && !rewritten {
		t.Fatal("no step rewrote history")
	}
}

// TestSortLineRecords sorts records against a sort by key, with buckets
// crowded on their first bytes and keys repeated.
func TestSortLineRecords(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for _, n := range []int{0, 1, 2, 31, 33, 1000, 20000} {
		var recs []byte
		for i := range n {
			var k lineKey
			for j := range k {
				k[j] = byte(r.IntN(256))
			}
			switch i % 4 {
			case 1: // crowded: the first bytes shared
				k[0], k[1], k[2] = 7, 7, 7
			case 2: // repeated
				if len(recs) > 0 {
					copy(k[:], recs[len(recs)-attribRecord:])
				}
			}
			recs = binary.LittleEndian.AppendUint32(append(recs, k[:]...), uint32(i))
		}
		want := make([][]byte, n)
		for i := range want {
			want[i] = recs[i*attribRecord : (i+1)*attribRecord : (i+1)*attribRecord]
			want[i] = slices.Clone(want[i])
		}
		slices.SortStableFunc(want, func(a, b []byte) int { return bytes.Compare(a[:16], b[:16]) })
		sortLineRecords(recs, 0)
		for i := range n {
			got := recs[i*attribRecord : (i+1)*attribRecord]
			if !bytes.Equal(got[:16], want[i][:16]) {
				t.Fatalf("n=%d: record %d has key %x, want %x", n, i, got[:16], want[i][:16])
			}
		}
		// The same records: each index once.
		seen := make([]bool, n)
		for i := range n {
			c := binary.LittleEndian.Uint32(recs[i*attribRecord+16:])
			if seen[c] {
				t.Fatalf("n=%d: record %d twice", n, c)
			}
			seen[c] = true
		}
	}
}
