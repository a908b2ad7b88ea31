package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallKeepsTheUsersJSON: what install and uninstall write back of a
// user's JSON settings reads as the user wrote it: no HTML escapes in a
// shell command, every number's own digits, the keys in their order, the
// file's indentation. Only borg's entries come and go.
func TestInstallKeepsTheUsersJSON(t *testing.T) {
	const tab = "{\n\t\"zeta\": {\"b\": 1, \"a\": 2},\n\t\"big\": 12345678901234567890,\n\t\"ratio\": 1.0,\n\t\"exp\": 1e3,\n\t\"alpha\": \"cd scripts && ./check.sh <in >out\"\n}\n"
	for _, tc := range []struct {
		name               string
		path               func(Installer) string
		orig               string
		install, uninstall func(Installer, string) (InstallTarget, error)
		kept               []string // in this order, in the file after install and after uninstall
	}{
		{"claude settings",
			func(in Installer) string { return in.ClaudeSettingsPath(false) },
			`{"zeta":{"b":1,"a":2},"hooks":{"Stop":[{"hooks":[{"type":"command","command":"cd scripts && ./check.sh <in >out","timeout":1.0}]}]},"big":12345678901234567890,"alpha":0.10}`,
			func(in Installer, p string) (InstallTarget, error) { return in.InstallAgent("claude", p, false) },
			func(in Installer, p string) (InstallTarget, error) { return in.UninstallAgent("claude", p, false) },
			[]string{`"zeta": {`, `"b": 1,`, `"a": 2`, `"hooks": {`, `"command": "cd scripts && ./check.sh <in >out"`, `"timeout": 1.0`, `"big": 12345678901234567890,`, `"alpha": 0.10`}},
		{"tab-indented gemini settings",
			func(in Installer) string { return in.GeminiSettingsPath(false) }, tab,
			func(in Installer, p string) (InstallTarget, error) { return in.InstallAgent(AgentGemini, p, false) },
			func(in Installer, p string) (InstallTarget, error) { return in.UninstallAgent(AgentGemini, p, false) },
			[]string{"\n\t\"zeta\": {\n\t\t\"b\": 1,\n\t\t\"a\": 2\n\t},", "\n\t\"big\": 12345678901234567890,", "\n\t\"ratio\": 1.0,", "\n\t\"exp\": 1e3,", "\n\t\"alpha\": \"cd scripts && ./check.sh <in >out\""}},
		{"cursor hooks",
			func(in Installer) string { return in.CursorHooksPath(false) },
			`{"version":1,"hooks":{"stop":[{"command":"notify <done> && exit 0"}]}}`,
			func(in Installer, p string) (InstallTarget, error) { return in.InstallAgent(AgentCursor, p, false) },
			func(in Installer, p string) (InstallTarget, error) { return in.UninstallAgent(AgentCursor, p, false) },
			[]string{`"version": 1,`, `"hooks": {`, `"stop": [`, `"command": "notify <done> && exit 0"`}},
		{".mcp.json",
			func(in Installer) string { return in.ClaudeMCPPath() },
			`{"mcpServers":{"z":{"command":"a&b","args":["<x>"],"env":{"N":"12345678901234567890"}},"a":{"command":"b","timeout":300.0}}}`,
			func(in Installer, p string) (InstallTarget, error) { return in.InstallClaudeMCP(p) },
			func(in Installer, p string) (InstallTarget, error) { return in.UninstallClaudeMCP(p) },
			[]string{`"z": {`, `"command": "a&b"`, `"<x>"`, `"a": {`, `"timeout": 300.0`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Installer{Repo: newRepo(t), Command: "borg"}
			path := tc.path(in)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.orig), 0o644); err != nil {
				t.Fatal(err)
			}
			check := func(when string) {
				t.Helper()
				got := readOr(path)
				if !json.Valid([]byte(got)) {
					t.Fatalf("after %s: not JSON:\n%s", when, got)
				}
				if strings.Contains(got, `\u00`) {
					t.Errorf("after %s: HTML escapes in the file:\n%s", when, got)
				}
				at := 0
				for _, k := range tc.kept {
					i := strings.Index(got[at:], k)
					if i < 0 {
						t.Fatalf("after %s: %q missing, or out of its order:\n%s", when, k, got)
					}
					at += i + len(k)
				}
			}
			if _, err := tc.install(in, path); err != nil {
				t.Fatal(err)
			}
			check("install")
			// An edit since install: uninstall takes borg's entries out of
			// the file rather than restoring it, and writes the rest back.
			edited := strings.Replace(readOr(path), "{", "{\"added\": true,", 1)
			if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			if tg, err := tc.uninstall(in, path); err != nil || tg.Action != "removed" {
				t.Fatalf("uninstall: %+v %v", tg, err)
			}
			check("uninstall")
			if got := readOr(path); strings.Contains(got, "borg") || !strings.Contains(got, `"added": true`) {
				t.Fatalf("after uninstall:\n%s", got)
			}
		})
	}
}

// TestJSONObjectRoundTrip: the reader and writer of settings files give
// back, byte for byte, a file laid out as they lay it out, and refuse what
// encoding/json refuses.
func TestJSONObjectRoundTrip(t *testing.T) {
	for _, in := range []string{
		"{}\n",
		"{\n  \"a\": [],\n  \"b\": {},\n  \"c\": null,\n  \"d\": false,\n  \"e\": -0.0e+00,\n  \"f\": \"\\u2028 \\\" é <>&\"\n}\n",
		"{\n    \"z\": [\n        1,\n        [\n            2\n        ]\n    ]\n}\n",
	} {
		o, err := decodeJSONObject([]byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		out, err := encodeJSON(o, jsonIndent([]byte(in)))
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in { // each laid out as borg lays it out
			t.Errorf("%q came back as %q", in, out)
		}
	}
	for _, bad := range []string{"", "[]", "{} {}", `{"a":}`, `{"a":1`, "{\"a\":1,}"} {
		if _, err := decodeJSONObject([]byte(bad)); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}

// TestUninstallLeavesUnreadableSettings: a settings file uninstall cannot
// read (comments, or no JSON) is left as it is: with nothing of borg's in
// it, uninstall is done and says why; with borg's hooks in it, it fails
// and names the file.
func TestUninstallLeavesUnreadableSettings(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		wantErr    string // "" for none
		wantNote   string
	}{
		{"comments", "{\n  // dark\n  \"ui\": {\"theme\": \"dark\"}\n}\n", "", "holds comments and nothing of borg's"},
		{"no JSON", "{\"ui\": ", "", "is not JSON borg can read and nothing of borg's"},
		{"comments and borg's hooks", "{\n  // mine\n  \"hooks\": {\"AfterAgent\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"borg hook stop\"}]}]}\n}\n", "holds comments, which borg would lose", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Installer{Repo: newRepo(t), Command: "borg"}
			path := in.GeminiSettingsPath(false)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			tg, err := in.UninstallAgent(AgentGemini, path, false)
			if tc.wantErr == "" && (err != nil || tg.Action != "not installed" || !strings.Contains(tg.Note, tc.wantNote)) {
				t.Fatalf("uninstall: %+v %v, want not installed, noted %q", tg, err, tc.wantNote)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("uninstall: %+v %v, want an error %q", tg, err, tc.wantErr)
			}
			if got := readOr(path); got != tc.data {
				t.Fatalf("uninstall changed the file:\n%s", got)
			}
		})
	}
}

// FuzzJSONObject holds the settings reader and writer on any input: no
// panic; what is read is what encoding/json reads as an object; written
// back, it is valid JSON that reads as the same value, and writing that
// again gives the same bytes.
func FuzzJSONObject(f *testing.F) {
	f.Add([]byte("{\n  \"hooks\": {\"Stop\": [{\"command\": \"cd x && ./y <in\"}]},\n  \"n\": 12345678901234567890\n}\n"))
	f.Add([]byte(`{"a":1.0,"a":2,"b":[null,true,"\u2028"]}`))
	f.Add([]byte("{} {}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := decodeJSONObject(data)
		var std map[string]any
		stdErr := json.Unmarshal(data, &std)
		if err != nil {
			return
		}
		if stdErr != nil {
			t.Fatalf("read %q, which encoding/json refuses: %v", data, stdErr)
		}
		out, err := encodeJSON(o, jsonIndent(data))
		if err != nil {
			t.Fatalf("write back %q: %v", data, err)
		}
		if !json.Valid(out) {
			t.Fatalf("%q written back as invalid JSON %q", data, out)
		}
		again, err := decodeJSONObject(out)
		if err != nil || !jsonEqual(o, again) {
			t.Fatalf("%q written back as %q, which reads differently (%v)", data, out, err)
		}
		if out2, err := encodeJSON(again, jsonIndent(out)); err != nil || string(out2) != string(out) {
			t.Fatalf("writing %q twice gave %q then %q", data, out, out2)
		}
	})
}
