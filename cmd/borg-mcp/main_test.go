package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunRefuses: borg-mcp refuses, before it serves, arguments it does
// not take and a folder that is no store, saying why and how to fix it.
func TestRunRefuses(t *testing.T) {
	notStore := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"an argument", []string{"--store", notStore, "extra"}, 2, "takes no arguments"},
		{"an unknown flag", []string{"--stor", notStore}, 2, "flag provided but not defined"},
		{"no store there", []string{"--store", notStore}, 1, "borg init --store " + notStore},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw strings.Builder
			getenv := func(k string) string {
				if k == "HOME" {
					return t.TempDir()
				}
				return ""
			}
			code := run(context.Background(), tc.args, strings.NewReader(""), &out, &errw, getenv)
			if code != tc.code || out.Len() != 0 || !strings.Contains(errw.String(), tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out.String(), errw.String(), tc.code, tc.want)
			}
		})
	}
}

// TestBorgBinary: the tools run $BORG_BIN when it is set (the borg that
// started the server), else borg as fsutil.Sibling finds it (its test
// covers a borg beside the binary): here, on PATH, or none, with the fix.
func TestBorgBinary(t *testing.T) {
	if got, err := borgBinary(func(k string) string {
		if k == borgEnv {
			return "/opt/borg/bin/borg"
		}
		return ""
	}); err != nil || got != "/opt/borg/bin/borg" {
		t.Errorf("with %s set: %q, %v", borgEnv, got, err)
	}
	dir := t.TempDir()
	fake := filepath.Join(dir, "borg")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	if got, err := borgBinary(func(string) string { return "" }); err != nil || got != fake {
		t.Errorf("with borg on PATH only: %q, %v; want %s", got, err, fake)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := borgBinary(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "go install") {
		t.Errorf("with no borg anywhere: %v; want the fix", err)
	}
}
