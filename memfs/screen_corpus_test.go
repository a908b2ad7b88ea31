package memfs

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestScreenCorpora counts the documents of BEIR-layout corpora the screen
// refuses, as borg eval's product path learns them (the document's text as
// the gist, its title as the title): false positives on natural prose.
// It runs only when BORG_SCREEN_CORPORA names a folder of corpora
// (scripts/screen-corpora.sh); -v prints each refusal's reason, never the
// document.
func TestScreenCorpora(t *testing.T) {
	root := os.Getenv("BORG_SCREEN_CORPORA")
	if root == "" {
		t.Skip("set BORG_SCREEN_CORPORA to a folder of BEIR corpora")
	}
	dirs, err := filepath.Glob(filepath.Join(root, "*", "corpus.jsonl"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no */corpus.jsonl under %s", root)
	}
	FindSecret("") // compile outside the timing
	for _, path := range dirs {
		name := filepath.Base(filepath.Dir(path))
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		var docs, secrets, orders int
		var spent time.Duration
		kinds := map[string]int{}
		for sc.Scan() {
			var d struct {
				ID    string `json:"_id"`
				Title string `json:"title"`
				Text  string `json:"text"`
			}
			if json.Unmarshal(sc.Bytes(), &d) != nil {
				continue
			}
			docs++
			gist := strings.Join(strings.Fields(d.Title+" "+d.Text), " ")
			start := time.Now()
			kind, found := FindSecretFolded(gist)
			if !found {
				kind, found = FindSecretFolded(d.Title)
			}
			phrase, ordered := findInstructionFolded(gist)
			spent += time.Since(start)
			switch {
			case found:
				secrets++
				kinds["secret "+kind]++
				t.Logf("%s doc %s: secret (%s)", name, d.ID, kind)
			case ordered:
				orders++
				kinds["instruction "+phrase]++
				t.Logf("%s doc %s: instruction-like (%s)", name, d.ID, phrase)
			}
		}
		_ = f.Close()
		t.Logf("%-16s %6d documents: %d refused as secrets, %d as instruction-like %v; %.0f µs a document",
			name, docs, secrets, orders, kinds, float64(spent.Microseconds())/float64(max(docs, 1)))
	}
}
