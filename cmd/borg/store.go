package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/hooks"
	"github.com/borg-memory/borg/memfs"
)

// Exit codes.
const (
	exitFail    = 1 // an error, or a store with problems a user must fix
	exitUsage   = 2 // bad arguments or flags
	exitRefused = 3 // borg refused the input (a secret, forbidden markup, a bad lesson)
)

// storeFlag selects the store; it is both global and per command, so
// `borg --store D list` and `borg list --store D` both work.
func storeFlag() cli.Flag {
	return &cli.StringFlag{
		Name:  "store",
		Usage: "the store directory (default $BORG_STORE, else $XDG_DATA_HOME/borg/store, else ~/.local/share/borg/store)",
	}
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON"}
}

// storeDir is the store directory the flags and environment select.
func storeDir(c *cli.Context, e *env) string {
	flag := ""
	for _, cc := range c.Lineage() {
		if cc.IsSet("store") {
			flag = cc.String("store")
			break
		}
	}
	return memfs.Discover(flag, e.getenv)
}

// storeOptions are the options every command opens the store with.
func storeOptions(e *env) []memfs.Option {
	return []memfs.Option{memfs.WithEnv(e.getenv), memfs.WithClock(e.now),
		memfs.WithWarn(func(line string) { fmt.Fprintf(e.err, "borg: %s\n", line) })}
}

// openStore opens the selected store, failing with the fix when it is
// none. A command (not a hook) shows a long build of the derived state.
func openStore(c *cli.Context, e *env) (*memfs.Store, error) {
	s, err := memfs.Open(storeDir(c, e), append(storeOptions(e), memfs.WithProgress(buildProgress(e)))...)
	if err != nil {
		return nil, fail(exitFail, "%v", err)
	}
	return s, nil
}

// writeJSON prints v as indented JSON.
func writeJSON(e *env, v any) error {
	enc := json.NewEncoder(e.out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// engineer is the hashed id of the person running borg: $BORG_ENGINEER,
// else git's user.email for the working directory, else "".
func engineer(e *env) string {
	if v := e.getenv("BORG_ENGINEER"); v != "" {
		return memfs.HashEngineer(v)
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return memfs.HashEngineer(memfs.GitUserEmail(wd))
}

// repoTag is the repo tag of the working directory: the base name of its
// git toplevel, or "" outside a git repository.
func repoTag() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	// The hooks' rule, without opening the repository.
	return hooks.RepoTag(hooks.RepoRoot(wd))
}

// usageErr reports bad arguments.
func usageErr(format string, args ...any) error {
	return fail(exitUsage, format, args...)
}

// flagsOnly refuses arguments to a command that takes none (an argument
// ignored reads as one obeyed).
func flagsOnly(c *cli.Context) error {
	if c.NArg() > 0 {
		var names []string
		for _, ctx := range c.Lineage() {
			if ctx.Command != nil && ctx.Command.Name != "" && ctx.Command.Name != ctx.App.Name {
				names = append([]string{ctx.Command.Name}, names...)
			}
		}
		name := strings.Join(names, " ")
		return usageErr("borg %s takes flags only, not %q (borg %s --help)", name, c.Args().First(), name)
	}
	return nil
}

// invalidLesson turns a codec error from borg learn into a refusal (exit 3)
// that says what to do: a reason that names no fix of its own (a hidden
// character, which the user cannot see to delete) gets one.
func invalidLesson(err error) error {
	var im *domain.InvalidMemory
	if !errors.As(err, &im) {
		return err
	}
	switch {
	case strings.HasPrefix(im.Reason, "hidden or control character"):
		return fail(exitRefused, "refusing to learn: %v: it renders as nothing, so an agent could be shown text you cannot see; retype that text without it (or strip it, e.g. with iconv or your editor's show-invisibles) and run borg learn again", im)
	case strings.Contains(im.Reason, ": "):
		// The reason already says what to do (the file-size limit).
		return fail(exitRefused, "refusing to learn: %v", im)
	}
	return fail(exitRefused, "refusing to learn: %v; change that text and run borg learn again", im)
}

// jsonMemory is a lesson's derived memory as JSON. activation is null when
// the lesson has no use (−Inf: JSON has no infinities).
type jsonMemory struct {
	ID           string   `json:"id"`
	Uses         int      `json:"uses"`
	Activation   *float64 `json:"activation"`
	Alpha        float64  `json:"alpha"`
	Beta         float64  `json:"beta"`
	Mean         float64  `json:"mean"`
	Weight       float64  `json:"weight"`
	MeanWeight   float64  `json:"mean_weight"`
	Consolidated bool     `json:"consolidated"`
	Dormant      bool     `json:"dormant"`
	Asked        int      `json:"asked"`
	Changed      int      `json:"changed"`
	Vouched      float64  `json:"vouched"`
	Ignored      int      `json:"ignored"`
	Corrected    int      `json:"corrected"`
	Vetoed       int      `json:"vetoed"`
	Tested       int      `json:"tested"`
	Regretted    float64  `json:"regretted"`
	LastUseTick  int      `json:"last_use_tick"`
}

func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

func toJSONMemory(m domain.Memory) jsonMemory {
	return jsonMemory{
		ID: m.ID, Uses: m.Uses, Activation: finite(m.Activation), Alpha: m.Alpha, Beta: m.Beta,
		Mean: m.Mean, Weight: m.Weight, MeanWeight: m.MeanWeight, Consolidated: m.Consolidated,
		Dormant: m.Dormant, Asked: m.Asked, Changed: m.Changed, Vouched: m.Vouched, Ignored: m.Ignored,
		Corrected: m.Corrected, Vetoed: m.Vetoed, Tested: m.Tested, Regretted: m.Regretted,
		LastUseTick: m.LastUseTick,
	}
}

// jsonLesson is a lesson as JSON; absent optional fields are omitted.
type jsonLesson struct {
	ID         string     `json:"id"`
	Title      string     `json:"title,omitempty"`
	Type       string     `json:"type"`
	Confidence float64    `json:"confidence"`
	Importance int        `json:"importance"`
	Reach      string     `json:"reach"`
	Author     string     `json:"author,omitempty"`
	Created    string     `json:"created,omitempty"`
	ValidUntil string     `json:"valid_until,omitempty"`
	Reprieves  int        `json:"reprieves"`
	Tags       []string   `json:"tags"`
	Anchors    []string   `json:"anchors"`
	Links      []jsonLink `json:"links"`
	Gist       string     `json:"gist"`
	Body       string     `json:"body,omitempty"`
	Path       string     `json:"path"`
}

type jsonLink struct {
	Rel     string `json:"rel"`
	Target  string `json:"target"`
	Derived bool   `json:"derived,omitempty"`
}

func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// reachOf is a lesson's reach with the default applied.
func reachOf(l domain.Lesson) string {
	if l.Reach == "" {
		return domain.ReachTeam
	}
	return l.Reach
}

func toJSONLesson(l domain.Lesson) jsonLesson {
	j := jsonLesson{
		ID: l.ID, Title: l.Title, Type: l.Type, Confidence: l.Confidence,
		Importance: l.EffectiveImportance(), Reach: reachOf(l), Author: l.Author,
		Created: timeString(l.Created), ValidUntil: timeString(l.ValidUntil), Reprieves: l.Reprieves,
		Tags: nonNil(l.Tags), Anchors: nonNil(l.Anchors), Links: []jsonLink{},
		Gist: l.Gist, Body: l.Body, Path: memfs.LessonPath(l.ID),
	}
	for _, k := range l.Links {
		j.Links = append(j.Links, jsonLink{Rel: k.Rel, Target: k.Target, Derived: k.Derived})
	}
	return j
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// fmtFloat prints a float for people, −Inf as "-inf".
func fmtFloat(x float64) string {
	if math.IsInf(x, -1) {
		return "-inf"
	}
	return fmt.Sprintf("%.4f", x)
}
