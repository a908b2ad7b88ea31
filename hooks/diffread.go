package hooks

import (
	"strconv"
	"strings"
)

// Kinds of a unified diff's lines, as eachDiffLine reads them.
const (
	diffOldPath = iota // "--- a/path": the file's old name (or /dev/null)
	diffNewPath        // "+++ b/path": its new name (or /dev/null)
	diffHunk           // "@@ -a,b +c,d @@"
	diffAdded          // "+text"
	diffRemoved        // "-text"
)

// eachDiffLine reads a unified diff (git's, or DiffSince's untracked
// files) and calls fn with each line that says something: a file's names
// (without git's a/ and b/, unquoted), a hunk header, and each added and
// removed line's text. A hunk's lines are counted off its header, so a
// removed line that reads "-- x" (an SQL comment) or an added one that
// reads "++ x" is text, never the next file's name. Lines after a file's
// names and before any hunk header (a diff written without one, as borg's
// untracked files once were) are read as added or removed, and a "--- "
// line is a name there only when a "+++ " line follows it. A diff cut
// short simply ends.
func eachDiffLine(diff string, fn func(kind int, text string)) {
	lines := strings.Split(diff, "\n")
	old, new := 0, 0 // lines left in the current hunk, on each side
	named := false   // a file's names were read, and no hunk since
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if (old > 0 || new > 0) && !strings.HasPrefix(line, "@@ ") && !strings.HasPrefix(line, "diff ") {
			// (A hunk's every line has its one-byte prefix: a header
			// there means the counts were off, and a new hunk or file
			// begins.)
			switch {
			case strings.HasPrefix(line, "+"):
				new--
				fn(diffAdded, line[1:])
			case strings.HasPrefix(line, "-"):
				old--
				fn(diffRemoved, line[1:])
			case strings.HasPrefix(line, " "), line == "":
				old, new = old-1, new-1
			}
			// "\ No newline at end of file" counts for neither side.
			continue
		}
		switch {
		case strings.HasPrefix(line, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			fn(diffOldPath, diffPath(line[4:], "a/"))
			fn(diffNewPath, diffPath(lines[i+1][4:], "b/"))
			i++
			named = true
		case strings.HasPrefix(line, "@@ "):
			if m := hunkHeader().FindStringSubmatch(line); m != nil {
				old, new = hunkCount(m[2]), hunkCount(m[4])
				named = false
				fn(diffHunk, line)
			}
		case named && strings.HasPrefix(line, "+"):
			fn(diffAdded, line[1:])
		case named && strings.HasPrefix(line, "-"):
			fn(diffRemoved, line[1:])
		case strings.HasPrefix(line, "diff "):
			old, new, named = 0, 0, false
		}
	}
}

// hunkCount is a hunk header's line count: absent means one.
func hunkCount(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

// diffPath is a diff header's file name: git quotes one with unusual
// bytes C-style ("a/na\303\257ve.go"), ends one holding a space with a
// tab, and prefixes a/ or b/.
func diffPath(name, prefix string) string {
	// A name with a space in it ends with a tab (GNU diff's rule, which
	// git follows), quoted or not.
	name = strings.TrimSuffix(name, "\t")
	if strings.HasPrefix(name, `"`) {
		if u, err := strconv.Unquote(name); err == nil {
			name = u
		}
	}
	if name == "/dev/null" {
		return name
	}
	return strings.TrimPrefix(name, prefix)
}
