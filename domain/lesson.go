package domain

import (
	"strings"
	"time"
	"unicode"
)

// FormatVersion is the memhtml format this build writes (memhtml-format).
const FormatVersion = 1

// Defaults for the optional memhtml fields (docs/formats.md, Lessons).
const (
	DefaultImportance = 5
	ReachTeam         = "team"
	// ReachRepoPrefix starts a repo reach: "repo:<tag>".
	ReachRepoPrefix = "repo:"
)

// Lesson types named by docs/formats.md (Lessons). Other lowercase words matching
// TypePattern are accepted too (a teammate may invent a type); the retention
// scorer gives them DEFAULT_WEIGHTS.
const (
	TypeEpisodic     = "episodic"
	TypeSemantic     = "semantic"
	TypeProcedural   = "procedural"
	TypeArc          = "arc"
	TypeErrorPattern = "error_pattern"
	TypeTask         = "task"
)

// Link relations between lessons (memhtml <link rel>).
const (
	RelSupersedes  = "supersedes"
	RelSupports    = "supports"
	RelContradicts = "contradicts"
	// RelConflictsWith links the copy sync splits off a lesson both sides
	// edited to the lesson it conflicted with.
	RelConflictsWith = "conflicts-with"
)

// ValidID reports whether id is a well-formed lesson id, the only shape one
// may take (the file is lessons/<id>.html): ^[a-z][a-z0-9-]{2,63}$.
func ValidID(id string) bool { return shaped(id, 3, 64, '-') }

// ValidType reports whether t is a well-formed lesson type:
// ^[a-z][a-z0-9_]{1,31}$.
func ValidType(t string) bool { return shaped(t, 2, 32, '_') }

// shaped reports whether s has between lo and hi bytes, starts with a
// lowercase ASCII letter and continues with lowercase letters, digits or
// sep (checked by hand: a regular expression compiled at every process
// start costs more than all the checks a hook makes).
func shaped(s string, lo, hi int, sep byte) bool {
	if len(s) < lo || len(s) > hi || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != sep {
			return false
		}
	}
	return true
}

// LessonLink is one edge from a lesson to another, written as
// <link rel="Rel" href="Target.html">. Derived marks an edge sleep mined
// (a suspicion for review) rather than one a person authored.
type LessonLink struct {
	Rel     string
	Target  string // lesson id
	Derived bool
}

// Lesson is one memhtml file's content. Zero values of optional fields mean
// "absent" and take the documented defaults on write.
type Lesson struct {
	Format     int
	ID         string
	Title      string
	Type       string
	Confidence float64 // [0,1], written with 4 decimals
	Importance int     // 1..10; 0 means absent (DefaultImportance)
	Reach      string  // "team" or "repo:<tag>"; "" means team
	Author     string  // hashed engineer id, e-xxxxxxxx
	Created    time.Time
	ValidUntil time.Time // zero: no TTL
	Reprieves  int
	Tags       []string
	Anchors    []string // path[@blob-sha]
	Links      []LessonLink
	Gist       string // the <mark> claim, one line
	Body       string // the article text without the gist
}

// RepoTag returns the repo tag of a repo-reach lesson, or "" for team reach.
func (l Lesson) RepoTag() string {
	if len(l.Reach) > len(ReachRepoPrefix) && l.Reach[:len(ReachRepoPrefix)] == ReachRepoPrefix {
		return l.Reach[len(ReachRepoPrefix):]
	}
	return ""
}

// ValidRepoTag reports whether tag can name a repository in a repo reach:
// a repository's tag is the base name of its top-level directory, so it
// holds no path separator and is not "." or "..", and, as a word of the
// reach line, no space, comma or control character. A reach whose tag no
// directory can have would never reach anyone.
func ValidRepoTag(tag string) bool {
	if tag == "" || tag == "." || tag == ".." {
		return false
	}
	return !strings.ContainsFunc(tag, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == ',' || r == '/' || r == '\\'
	})
}

// EffectiveImportance is Importance with the default applied.
func (l Lesson) EffectiveImportance() int {
	if l.Importance <= 0 {
		return DefaultImportance
	}
	return l.Importance
}

// InvalidMemory is the typed error for a lesson file that violates the memhtml
// format or vocabulary. Reason names the rule broken.
type InvalidMemory struct {
	Path   string
	Reason string
}

func (e *InvalidMemory) Error() string {
	if e.Path == "" {
		return "invalid memory: " + e.Reason
	}
	return "invalid memory " + e.Path + ": " + e.Reason
}
