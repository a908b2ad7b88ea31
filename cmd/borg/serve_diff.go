package main

import "strings"

// fileDiff is one file's change in a sleep phase, as lines for the page.
type fileDiff struct {
	Path    string
	Status  string // added, deleted, modified
	Lines   []diffLine
	TooLong string // set instead of Lines when the files are too long to diff here
}

// diffLine is one line of a diff: Op is ' ', '-', '+' or '~' (lines left
// out between hunks).
type diffLine struct {
	Op   string
	Text string
}

// Diff limits: lesson files are a few dozen lines; anything far longer is
// summarised instead of diffed (the LCS table is lines×lines).
const (
	maxDiffLines   = 1000
	diffContext    = 2
	maxShownDiffLn = 400
)

// diffFile diffs a file's text before and after a phase, line by line, with
// diffContext lines of context around each change.
func diffFile(path, old, now string, deleted bool) fileDiff {
	d := fileDiff{Path: path, Status: "modified"}
	switch {
	case deleted:
		d.Status = "deleted"
	case old == "":
		d.Status = "added"
	}
	a, b := splitLines(old), splitLines(now)
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		d.TooLong = "too long to diff here: see the sleep branch's commit"
		return d
	}
	ops := lineDiff(a, b)
	// Keep the changed lines and diffContext lines around each.
	keep := make([]bool, len(ops))
	for i, op := range ops {
		if op.Op != " " {
			for j := max(0, i-diffContext); j <= min(len(ops)-1, i+diffContext); j++ {
				keep[j] = true
			}
		}
	}
	skipped := false
	for i, op := range ops {
		if !keep[i] {
			skipped = true
			continue
		}
		if skipped && len(d.Lines) > 0 {
			d.Lines = append(d.Lines, diffLine{Op: "~", Text: "…"})
		}
		skipped = false
		if len(d.Lines) == maxShownDiffLn {
			d.Lines = append(d.Lines, diffLine{Op: "~", Text: "… (more in the sleep branch's commit)"})
			break
		}
		d.Lines = append(d.Lines, op)
	}
	return d
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// lineDiff is a longest-common-subsequence diff of a against b.
func lineDiff(a, b []string) []diffLine {
	n, m := len(a), len(b)
	// lcs[i][j] is the LCS length of a[i:] and b[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			out = append(out, diffLine{Op: " ", Text: a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, diffLine{Op: "-", Text: a[i]})
			i++
		default:
			out = append(out, diffLine{Op: "+", Text: b[j]})
			j++
		}
	}
	for ; i < n; i++ {
		out = append(out, diffLine{Op: "-", Text: a[i]})
	}
	for ; j < m; j++ {
		out = append(out, diffLine{Op: "+", Text: b[j]})
	}
	return out
}
