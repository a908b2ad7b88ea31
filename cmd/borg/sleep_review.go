package main

import (
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/borg-memory/borg/sleep"
)

// The scheduled workflows borg init --ci writes into a store: each night
// they run borg sleep --push and open a pull (merge) request whose
// description is sleepMarkdown's.
//
//go:embed ci/github.yml ci/gitlab.yml
var ciFiles embed.FS

// ciWorkflow is the workflow file for a CI system: its path in the store
// and its content, pinned to this borg's version.
func ciWorkflow(system string) (path string, content []byte, err error) {
	var src string
	switch system {
	case "github":
		path, src = ".github/workflows/borg-sleep.yml", "ci/github.yml"
	case "gitlab":
		path, src = ".gitlab-ci.yml", "ci/gitlab.yml"
	default:
		return "", nil, fmt.Errorf("--ci %q: use github or gitlab", system)
	}
	data, err := ciFiles.ReadFile(src)
	if err != nil {
		return "", nil, err
	}
	v := version
	if v == "" || v == "dev" {
		v = "latest"
	}
	return path, []byte(strings.ReplaceAll(string(data), "BORG_VERSION", v)), nil
}

// sleepMarkdown is a sleep's pull request description: what each phase did
// and why, one section per phase, the commits last.
func sleepMarkdown(r sleep.Result) string {
	var b strings.Builder
	p := r.Plan
	fmt.Fprintf(&b, "## borg sleep %s\n\n", p.Date)
	fmt.Fprintf(&b, "From `%s`: %d lessons, %d events, embedder `%s`.", shortHash(p.Base), p.Lessons, p.Events, p.Embedder)
	if p.LastSleep != "" {
		fmt.Fprintf(&b, " Last sleep: %s.", p.LastSleep)
	}
	b.WriteString(" Each phase is its own commit: review them one by one.\n")
	if p.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", mdText(p.Note))
	}
	for _, ph := range p.Phases {
		fmt.Fprintf(&b, "\n### %d. %s\n\n", ph.Number, ph.Phase)
		var counts []string
		for _, c := range ph.Counts {
			counts = append(counts, fmt.Sprintf("%s: %d", c.Name, c.N))
		}
		if len(counts) > 0 {
			fmt.Fprintf(&b, "%s", strings.Join(counts, ", "))
		}
		if ph.Files == 0 {
			b.WriteString(" (no change)\n")
		} else {
			fmt.Fprintf(&b, " (%s)\n", sleep.FileCount(ph.Files))
		}
		for _, n := range ph.Notes {
			fmt.Fprintf(&b, "\n%s\n", mdText(n))
		}
		// The decisions that change a file first, then the others (a
		// refusal, a guard, a compress); past the first reviewMarkdownItems,
		// only what they are counted, and where to read them: the
		// commit's diff holds every change, the sleep's output every
		// decision.
		items := slices.Clone(ph.Items)
		slices.SortStableFunc(items, func(a, b sleep.Item) int {
			switch {
			case a.NoChange == b.NoChange:
				return 0
			case b.NoChange:
				return -1
			}
			return 1
		})
		if len(items) > 0 {
			b.WriteString("\n")
		}
		for i, it := range items {
			if i == reviewMarkdownItems {
				rest := items[i:]
				changes := 0
				for _, it := range rest {
					if !it.NoChange {
						changes++
					}
				}
				switch {
				case changes > 0:
					fmt.Fprintf(&b, "- … and %d more (%d of them changes: the commit's diff shows them; `borg sleep`'s output lists every decision)\n", len(rest), changes)
				default:
					fmt.Fprintf(&b, "- … and %d more that change no file (`borg sleep`'s output lists every decision)\n", len(rest))
				}
				break
			}
			line := fmt.Sprintf("`%s` %s", it.Lesson, it.Action)
			if it.Other != "" {
				line += fmt.Sprintf(" `%s`", it.Other)
			}
			if it.Why != "" {
				line += ": " + mdText(it.Why)
			}
			fmt.Fprintf(&b, "- %s\n", line)
		}
	}
	if len(r.Commits) > 0 {
		fmt.Fprintf(&b, "\n### Commits on `%s`\n\n", r.Branch)
		for _, c := range r.Commits {
			fmt.Fprintf(&b, "- `%s` %s\n", shortHash(c.Commit), c.Subject)
		}
	}
	return b.String()
}

// mdText is plan text (a reason quoting lesson text: a frame's values, an
// entity) fit for a pull request's markdown: its <, > and & as entities, so
// a value such as "<tenant-id>" or "<!--" reads as written instead of
// passing as HTML the forge strips (the value vanishes) or as a comment
// that hides the rest of the description.
func mdText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// reviewMarkdownItems is how many decisions of a phase sleepMarkdown lists.
const reviewMarkdownItems = 50

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
