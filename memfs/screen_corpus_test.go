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
	FindSecret("") // compile outside the timing
	eachCorpus(t, func(name string, docs func(func(id, title, text string))) {
		var n, secrets, orders int
		var spent time.Duration
		kinds := map[string]int{}
		docs(func(id, title, text string) {
			n++
			gist := strings.Join(strings.Fields(title+" "+text), " ")
			start := time.Now()
			kind, found := FindSecretFolded(gist)
			if !found {
				kind, found = FindSecretFolded(title)
			}
			phrase, ordered := findInstructionFolded(gist)
			spent += time.Since(start)
			switch {
			case found:
				secrets++
				kinds["secret "+kind]++
				t.Logf("%s doc %s: secret (%s)", name, id, kind)
			case ordered:
				orders++
				kinds["instruction "+phrase]++
				t.Logf("%s doc %s: instruction-like (%s)", name, id, phrase)
			}
		})
		t.Logf("%-16s %6d documents: %d refused as secrets, %d as instruction-like %v; %.0f µs a document",
			name, n, secrets, orders, kinds, float64(spent.Microseconds())/float64(max(n, 1)))
	})
}

// eachCorpus calls fn with the name of each BEIR-layout corpus under
// $BORG_SCREEN_CORPORA and a walk over its documents (a line that is not
// a document is skipped); it skips the test when the variable is unset.
func eachCorpus(t *testing.T, fn func(name string, docs func(func(id, title, text string)))) {
	t.Helper()
	root := os.Getenv("BORG_SCREEN_CORPORA")
	if root == "" {
		t.Skip("set BORG_SCREEN_CORPORA to a folder of BEIR corpora")
	}
	paths, err := filepath.Glob(filepath.Join(root, "*", "corpus.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no */corpus.jsonl under %s", root)
	}
	for _, path := range paths {
		fn(filepath.Base(filepath.Dir(path)), func(doc func(id, title, text string)) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			sc := bufio.NewScanner(f)
			sc.Buffer(make([]byte, 1<<20), 1<<24)
			for sc.Scan() {
				var d struct {
					ID    string `json:"_id"`
					Title string `json:"title"`
					Text  string `json:"text"`
				}
				if json.Unmarshal(sc.Bytes(), &d) == nil {
					doc(d.ID, d.Title, d.Text)
				}
			}
			if err := sc.Err(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
