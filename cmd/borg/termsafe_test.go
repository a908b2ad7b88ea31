package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestTermSafe(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain text passes", []string{"lessons/a.html: ok\n"}, "lessons/a.html: ok\n"},
		{"non-ASCII letters pass", []string{"café 中文 ⚠️\n"}, "café 中文 ⚠️\n"},
		{"tab and carriage return pass", []string{"\rx\ty"}, "\rx\ty"},
		{"an escape sequence is spelled out", []string{"lessons/\x1b]0;pwned\x07.html"}, `lessons/\u001b]0;pwned\u0007.html`},
		{"C1 CSI", []string{"a\u009b31mb"}, `a\u009b31mb`},
		{"bidi override", []string{"a\u202eb"}, `a\u202eb`},
		{"a tag character as a surrogate pair", []string{"a\U000E0041b"}, `a\udb40\udc41b`},
		{"invalid UTF-8", []string{"a\xffb"}, `a\xffb`},
		{"a character split across writes", []string{"a\xc2", "\x9bb", "\xe2\x80", "\xaec"}, `a\u009bb\u202ec`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			w := termSafe(&out)
			for _, s := range tc.writes {
				n, err := w.Write([]byte(s))
				if err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTermSafeKeepsJSON: JSON passed through termSafe decodes to the same
// value, whatever hostile text it quotes.
func TestTermSafeKeepsJSON(t *testing.T) {
	in := map[string]string{"path": "lessons/\x1b[2J\u009b\u202e\U000E0041\u200b.html", "ok": "naïve ⚠️"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := termSafe(&out).Write(raw); err != nil {
		t.Fatal(err)
	}
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil {
		t.Fatalf("termSafe broke the JSON %s: %v", out.Bytes(), err)
	}
	for k, v := range in {
		if back[k] != v {
			t.Errorf("%s: got %q, want %q", k, back[k], v)
		}
	}
	if bytes.ContainsAny(out.Bytes(), "\x1b\u009b\u202e") {
		t.Errorf("a control character got through: %q", out.Bytes())
	}
}
