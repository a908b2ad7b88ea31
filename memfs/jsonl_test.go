package memfs

import (
	"encoding/json"
	"testing"

	"github.com/borg-memory/borg/domain"
)

func TestFastDecode(t *testing.T) {
	cases := []struct {
		name string
		line string
		ok   bool
	}{
		{"marshalled event", `{"id":"0123456789abcdef","ms":1795999261000,"kind":"vetoed","session":"s-fda9ba3c24448187","lesson":"abc","author":"e-b00cdca1"}`, true},
		{"spaces", ` { "ms" : 1 , "kind" : "session" } `, true},
		{"weight", `{"ms":1,"kind":"regret","w":0.875}`, true},
		{"empty object", `{}`, true},
		{"escape falls back", `{"ms":1,"kind":"a\"b"}`, false},
		{"unknown key falls back", `{"ms":1,"kind":"vetoed","why":"x"}`, false},
		{"capital key falls back", `{"MS":1,"kind":"session"}`, false},
		{"float ms falls back", `{"ms":1.5,"kind":"session"}`, false},
		{"leading zero", `{"ms":01,"kind":"session"}`, false},
		{"null", `{"ms":null,"kind":"session"}`, false},
		{"trailing garbage", `{"ms":1,"kind":"session"}x`, false},
		{"trailing comma", `{"ms":1,}`, false},
		{"bad utf-8", "{\"kind\":\"a\xffb\"}", false},
		{"torn", `{"ms":1,"kind":"sess`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := fastDecode([]byte(tc.line), nil)
			if ok != tc.ok {
				t.Fatalf("fastDecode ok = %v; want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			var want domain.Event
			if err := json.Unmarshal([]byte(tc.line), &want); err != nil || got != want {
				t.Fatalf("fastDecode = %+v; encoding/json = %+v, %v", got, want, err)
			}
		})
	}
}

// FuzzFastDecode: whatever the fast path accepts, encoding/json reads the
// same way.
func FuzzFastDecode(f *testing.F) {
	f.Add([]byte(`{"id":"0123456789abcdef","ms":1795999261000,"kind":"vetoed","session":"s-fda9ba3c24448187","lesson":"abc","author":"e-b00cdca1","w":0.5}`))
	f.Add([]byte(`{"ms":-0,"w":1e-3,"kind":"x"}`))
	f.Add([]byte(`{"ms":9223372036854775808}`))
	in := newInterner()
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := fastDecode(line, nil)
		if !ok {
			return
		}
		var want domain.Event
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("fast path accepted %q; encoding/json: %v", line, err)
		}
		if got != want {
			t.Fatalf("fast path read %q as %+v; encoding/json as %+v", line, got, want)
		}
		// Through an interner it reads the same, and what it keeps
		// never aliases the line.
		buf := append([]byte(nil), line...)
		again, _ := fastDecode(buf, in)
		clear(buf)
		if again != got {
			t.Fatalf("through an interner %q reads as %+v, not %+v", line, again, got)
		}
	})
}
