package sleep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/borg-memory/borg/domain"
)

func TestReadVerbClaim(t *testing.T) {
	tests := []struct {
		name, a, b string
		conflict   bool
	}{
		{"a schedule rewritten", "The nightly export of Billing runs at 02:00 UTC.", "The nightly export of Billing runs at 03:30 UTC.", true},
		{"two subjects, one schedule", "The nightly export of Billing runs at 02:00 UTC.", "The nightly export of Search runs at 03:30 UTC.", false},
		{"a move is a new location", "The primary database of Search lives in eu-west-1.", "The primary database of Search moved to eu-central-1.", true},
		{"two databases in one region", "The primary database of Search lives in eu-west-1.", "The primary database of Billing lives in eu-west-1.", false},
		{"an owner rewritten, two phrasings", "The payments repository is owned by team Ledger.", "The payments repository belongs to team Atlas.", true},
		{"the same value restated", "The payments repository is owned by team Ledger.", "The payments repository is maintained by team ledger", false},
		{"a clause after the value", "The cache cluster lives in us-east-1, behind the internal load balancer.",
			"The cache cluster lives in eu-west-1; it moved in March.", true},
		{"different kinds of value", "Session tokens expire after 30 minutes.", "Session tokens expire after logout of the last tab.", false},
		{"a pronoun is no subject", "It runs at 02:00 UTC.", "It runs at 04:00 UTC.", false},
		{"a long value is a clause", "The report runs at the end of every quarter after finance has closed the books.", "The report runs at 09:00.", false},
		{"no relation", "Retry the payments client with exponential backoff.", "Retry the payments client with linear backoff.", false},
		{"copula frames still read", "The default region is eu-west-1.", "The default region is us-east-1.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, okA := readFrame("a", tt.a)
			b, okB := readFrame("b", tt.b)
			if got := okA && okB && frameConflict(a, b); got != tt.conflict {
				t.Errorf("conflict = %v, want %v (%+v %v, %+v %v)", got, tt.conflict, a, okA, b, okB)
			}
		})
	}
}

func TestRelationPhrasesAreLowercaseWords(t *testing.T) {
	for _, p := range relationPhrases() {
		if p != strings.ToLower(p) || strings.Join(strings.Fields(p), " ") != p {
			t.Errorf("relation phrase %q: want lowercase words separated by one space", p)
		}
	}
}

func FuzzReadVerbClaim(f *testing.F) {
	for _, s := range []string{"The nightly export of Billing runs at 02:00 UTC.", "It lives in eu-west-1", "", " - ", "a is owned by b, c", "x moved to"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, gist string) {
		c, ok := readVerbClaim("x", gist)
		if !ok {
			return
		}
		if c.subject == "" || c.value == "" || len(strings.Fields(c.value)) > verbClaimMaxValue {
			t.Fatalf("claim out of bounds: %+v", c)
		}
		if !strings.HasPrefix(c.key, "verb: "+c.subject+" | ") {
			t.Fatalf("key %q does not name subject %q", c.key, c.subject)
		}
		if utf8.ValidString(gist) && !utf8.ValidString(c.key) {
			t.Fatalf("invalid key from a valid gist: %q", c.key)
		}
	})
}

// TestEdgeTypingPrecision measures the edge phase's pair rule on a
// labelled set (testdata/edge-pairs.jsonl): pairs of lessons that name a
// common entity, each labelled accept when a reviewer would keep a derived
// link between them (one subject's facts) and reject when they only share
// a value. Precision is the share of linked pairs labelled accept.
func TestEdgeTypingPrecision(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "edge-pairs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var linked, linkedOK, accepts int
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var p struct {
			A, B, Why string
			Accept    bool
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		a := domain.Lesson{ID: "a", Gist: p.A}
		b := domain.Lesson{ID: "b", Gist: p.B}
		if len(shared(Entities(p.A), Entities(p.B), 1)) == 0 && p.Accept {
			t.Logf("line %d shares no entity: never a candidate (%s)", i+1, p.Why)
		}
		_, _, ok := typeEdge(viewOf(a), viewOf(b))
		if p.Accept {
			accepts++
		}
		if ok {
			linked++
			if p.Accept {
				linkedOK++
			} else {
				t.Logf("line %d linked, labelled reject: %s", i+1, p.Why)
			}
		} else if p.Accept {
			t.Logf("line %d not linked, labelled accept: %s", i+1, p.Why)
		}
	}
	precision := float64(linkedOK) / float64(max(linked, 1))
	recall := float64(linkedOK) / float64(max(accepts, 1))
	t.Logf("edge typing on %d labelled pairs: %d linked, precision %.2f, recall %.2f", len(strings.Split(strings.TrimSpace(string(data)), "\n")), linked, precision, recall)
	if linked == 0 || precision < 0.9 {
		t.Fatalf("edge typing precision %.2f (%d of %d linked pairs accepted), want at least 0.9", precision, linkedOK, linked)
	}
}
