package memfs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/borg-memory/borg/domain"
)

func TestLogNode(t *testing.T) {
	tests := []struct {
		name string
		node string
		k    int
		ok   bool
	}{
		{"log/n-0123abcd.jsonl", "n-0123abcd", 0, true},
		{"n-0123abcd~0001.jsonl", "n-0123abcd", 1, true},
		{"log/n-0123abcd~0042.jsonl", "n-0123abcd", 42, true},
		{"log/n-0123abcd~12345.jsonl", "n-0123abcd", 12345, true},
		{"log/n-0123abcd~1.jsonl", "", 0, false},     // not the name borg writes
		{"log/n-0123abcd~00042.jsonl", "", 0, false}, // nor this
		{"log/n-0123abcd~0000.jsonl", "", 0, false},
		{"log/n-0123abcd~x001.jsonl", "", 0, false},
		{"log/~0001.jsonl", "", 0, false},
		{"log/n-0123abcd.json", "", 0, false},
		{"log/.jsonl", "", 0, false},
	}
	for _, tt := range tests {
		node, k, ok := LogNode(tt.name)
		if node != tt.node || k != tt.k || ok != tt.ok {
			t.Errorf("LogNode(%q) = %q, %d, %v; want %q, %d, %v", tt.name, node, k, ok, tt.node, tt.k, tt.ok)
		}
		if ok && segmentPath(node, k) != LogDir+"/"+strings.TrimPrefix(tt.name, LogDir+"/") {
			t.Errorf("segmentPath(%q, %d) = %q, not %q", node, k, segmentPath(node, k), tt.name)
		}
	}
}

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"524288", 524288, true}, {"512K", 512 << 10, true}, {"1m", 1 << 20, true}, {"2G", 2 << 30, true},
		{"", 0, false}, {"K", 0, false}, {"-1", 0, false}, {"1.5M", 0, false}, {"9999999999G", 0, false},
	} {
		got, err := ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v", tt.in, got, err)
		}
	}
}

// rollingStore is a store whose log rolls past roll bytes.
func rollingStore(t *testing.T, roll string) *Store {
	t.Helper()
	s, err := Init(context.Background(), filepath.Join(t.TempDir(), "store"), "", WithEnv(testEnv(map[string]string{"BORG_LOG_ROLL": roll})))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLogRolls: appends past the roll size start a new segment; every
// segment but the last stays near the roll size; a sync-style commit of
// the node's log takes only the segments that grew since the last one.
func TestLogRolls(t *testing.T) {
	s := rollingStore(t, "2K")
	r := rand.New(rand.NewPCG(3, 4))
	node, err := s.Node()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if err := s.Append(randomEvents(r, fmt.Sprint("a", i), 5)...); err != nil {
			t.Fatal(err)
		}
	}
	segs, err := s.LogSegments()
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 5 {
		t.Fatalf("%d segments after ~40 KB at a 2K roll: %v", len(segs), segs)
	}
	for i, p := range segs {
		fi, err := os.Stat(filepath.Join(s.Dir(), filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if n, k, ok := LogNode(p); !ok || n != node || k != i {
			t.Fatalf("segment %d is %s", i, p)
		}
		if i < len(segs)-1 && (fi.Size() < 2<<10 || fi.Size() > 4<<10) {
			t.Errorf("%s holds %d bytes: a sealed segment holds the roll size and one append", p, fi.Size())
		}
	}
	if got := s.LogPath(); got != segs[len(segs)-1] {
		t.Fatalf("LogPath = %s, want the last segment %s", got, segs[len(segs)-1])
	}
	events, rep, err := s.ReadEvents()
	if err != nil || len(events) != 200 || len(rep.Skipped) > 0 {
		t.Fatalf("read %d events (%v), %+v", len(events), err, rep)
	}

	if _, err := s.commitOwnLog(); err != nil {
		t.Fatal(err)
	}
	if out := gitCLI(t, s.Dir(), "status", "--porcelain", "log"); out != "" {
		t.Fatalf("segments left uncommitted:\n%s", out)
	}
	if paths, err := s.OwnLogPaths(); err != nil || len(paths) != 1 || paths[0] != segs[len(segs)-1] {
		t.Fatalf("OwnLogPaths after a commit = %v, %v", paths, err)
	}
	// A few more lines (about one roll's worth): the next commit takes the
	// segment committed last and what followed it, nothing earlier.
	for i := range 2 {
		if err := s.Append(randomEvents(r, fmt.Sprint("b", i), 5)...); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.commitOwnLog(); err != nil {
		t.Fatal(err)
	}
	changed := strings.Fields(gitCLI(t, s.Dir(), "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD~1", "HEAD"))
	if len(changed) == 0 || len(changed) > 3 {
		t.Fatalf("a commit of new lines changed %v", changed)
	}
	for _, p := range changed {
		if _, k, _ := LogNode(p); k < len(segs)-1 {
			t.Fatalf("a sealed segment was committed again: %v", changed)
		}
	}
}

// TestRolledLogDerivesSameMemory: the same events appended to a store
// whose log never rolls and to one whose log rolls every few hundred
// bytes, committed at the same points, derive the same ledger and the
// same memories.
func TestRolledLogDerivesSameMemory(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			single, rolled := rollingStore(t, "1G"), rollingStore(t, "700")
			r := rand.New(rand.NewPCG(seed, 99))
			for batch := range 30 {
				events := randomEvents(r, fmt.Sprint("n", batch%3), 1+r.IntN(8))
				for _, s := range []*Store{single, rolled} {
					if err := s.Append(events...); err != nil {
						t.Fatal(err)
					}
					if batch%7 == 6 {
						if _, err := s.commitOwnLog(); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if segs, _ := rolled.LogSegments(); len(segs) < 3 {
				t.Fatalf("the rolled store has %d segments", len(segs))
			}
			a, err := single.LoadLedger()
			if err != nil {
				t.Fatal(err)
			}
			b, err := rolled.LoadLedger()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatal("the rolled log derives another ledger")
			}
			infos := []domain.Lesson{{ID: "alpha-one"}, {ID: "beta-two"}, {ID: "gamma-three", Reach: "repo:api"}, {ID: "delta-four"}}
			ma, err := single.Memories(infos, "", domain.DefaultWeights)
			if err != nil {
				t.Fatal(err)
			}
			mb, err := rolled.Memories(infos, "", domain.DefaultWeights)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ma) != fmt.Sprint(mb) {
				t.Fatalf("memories differ:\n%v\n%v", ma, mb)
			}
		})
	}
}
