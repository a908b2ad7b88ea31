package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

func listCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the lessons in the store",
		ArgsUsage: " ",
		Flags: []cli.Flag{
			storeFlag(), jsonFlag(),
			&cli.StringFlag{Name: "type", Usage: "only lessons of this type"},
			&cli.StringFlag{Name: "reach", Usage: "only lessons of this reach: team, repo (any repo) or repo:<tag>"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("list takes no arguments (filter with --type and --reach)")
			}
			// A reach no lesson can have (a typo, "teams") would list
			// nothing and look like an empty store: it is refused.
			if r := c.String("reach"); r != "" && r != domain.ReachTeam && r != "repo" &&
				(!strings.HasPrefix(r, domain.ReachRepoPrefix) || !domain.ValidRepoTag(strings.TrimPrefix(r, domain.ReachRepoPrefix))) {
				return usageErr("--reach %q: use team, repo (any repository's lessons) or repo:<tag> (repo:payments)", r)
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			return runList(e, s, c.String("type"), c.String("reach"), c.Bool("json"))
		},
	}
}

// listJSONLesson is one lesson of list --json: the lesson without its body,
// and the factor ranking multiplies its text score by (see rankingFactor),
// with the session results it rests on.
type listJSONLesson struct {
	jsonLesson
	RankingFactor float64 `json:"ranking_factor"`
	Results       int     `json:"results"`
	// SupersededBy names the lessons of the store whose earned supersedes
	// link replaces this one (supersededMarks).
	SupersededBy []string `json:"superseded_by,omitempty"`
}

// supersededNote is what a listing adds after a superseded lesson's gist.
func supersededNote(by []string) string {
	if len(by) == 0 {
		return ""
	}
	return "  (superseded by " + strings.Join(by, ", ") + ")"
}

// runList prints the lessons matching the filters; unreadable files are
// named on stderr and skipped.
func runList(e *env, s *memfs.Store, typ, reach string, asJSON bool) error {
	lessons, errs := s.Lessons()
	for _, err := range errs {
		fmt.Fprintf(e.err, "borg: skipped %v (run borg doctor)\n", err)
	}
	var out []domain.Lesson
	for _, l := range lessons {
		if typ != "" && l.Type != typ {
			continue
		}
		r := reachOf(l)
		switch {
		case reach == "":
		case reach == "repo" && strings.HasPrefix(r, domain.ReachRepoPrefix):
		case reach == r:
		default:
			continue
		}
		out = append(out, l)
	}
	supBy, err := supersededMarks(s, lessons, e.getenv("BORG_SESSION"))
	if err != nil {
		return err
	}
	if asJSON {
		mems, err := s.Memories(out, e.getenv("BORG_SESSION"), domain.DefaultWeights)
		if err != nil {
			return err
		}
		items := make([]listJSONLesson, 0, len(out))
		for i, l := range out {
			rl, _ := redacted(l) // a secret is never printed
			j := toJSONLesson(rl)
			j.Body = ""
			items = append(items, listJSONLesson{j, rankingFactor(mems[i]), sessionResults(mems[i]), supBy[rl.ID]})
		}
		return writeJSON(e, items)
	}
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	for _, l := range out {
		rl, _ := redacted(l)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s%s\n", rl.ID, rl.Type, reachOf(rl), rl.Gist, supersededNote(supBy[rl.ID]))
	}
	return tw.Flush()
}

// supersededMarks is what a listing marks as superseded among lessons (the
// store's, unredacted): each lesson an earned supersedes link of another
// replaces, read as the index reads links (its reading of tags; a lesson
// vetoed or refused by the screen supersedes nothing), keys and successors
// as a listing may print them (memfs.SafeID).
func supersededMarks(s *memfs.Store, lessons []domain.Lesson, session string) (map[string][]string, error) {
	marks := domain.SupersededBy(lessons, func(l domain.Lesson) func(string) bool { return index.TagHolds(l.Tags) })
	if len(marks) == 0 {
		return marks, nil
	}
	succ := map[string]bool{}
	for _, ids := range marks {
		for _, id := range ids {
			succ[id] = true
		}
	}
	var those []domain.Lesson
	for _, l := range lessons {
		if succ[l.ID] {
			those = append(those, l)
		}
	}
	mems, err := s.Memories(those, session, domain.DefaultWeights)
	if err != nil {
		return nil, err
	}
	for i, m := range mems {
		succ[those[i].ID] = m.Vetoed == 0 && memfs.Screen(those[i]) == ""
	}
	safe := make(map[string][]string, len(marks))
	for id, ids := range marks {
		var out []string
		for _, s := range ids {
			if succ[s] {
				out = append(out, memfs.SafeID(s))
			}
		}
		if len(out) > 0 {
			safe[memfs.SafeID(id)] = out
		}
	}
	return safe, nil
}
