package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/borg-memory/borg/memfs"
)

// TestShowArchived: show of a lesson a sleep archived shows it as it was
// archived, and says so, where it is, and how to see why, rather than that
// there is no such lesson.
func TestShowArchived(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	var out, errb bytes.Buffer
	e := &env{in: &bytes.Buffer{}, out: &out, err: &errb, getenv: storeGetenv(dir), now: time.Now}
	borg := func(args ...string) int {
		out.Reset()
		errb.Reset()
		return run(context.Background(), append([]string{"borg"}, args...), e)
	}
	if borg("init") != 0 || borg("learn", "--json", "The legacy FTP export runs nightly") != 0 {
		t.Fatalf("setup: %s", errb.String())
	}
	var got struct{ ID string }
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	from, to := filepath.Join(dir, filepath.FromSlash(memfs.LessonPath(got.ID))), filepath.Join(dir, filepath.FromSlash(memfs.ArchivePath(got.ID)))
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	if code := borg("show", got.ID); code != 0 || !strings.Contains(errb.String(), "lesson "+got.ID+" is archived ("+memfs.ArchivePath(got.ID)+")") ||
		!strings.Contains(out.String(), "The legacy FTP export runs nightly") || !strings.Contains(out.String(), "archived:") {
		t.Fatalf("show of an archived lesson: exit %d, %q %q", code, out.String(), errb.String())
	}
	if code := borg("show", "--json", got.ID); code != 0 || !strings.Contains(out.String(), `"archived": true`) ||
		!strings.Contains(out.String(), `"path": "`+memfs.ArchivePath(got.ID)+`"`) {
		t.Fatalf("show --json of an archived lesson: exit %d, %q", code, out.String())
	}
}
