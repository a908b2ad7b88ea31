package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/domain"
	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

func showCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print a lesson and its derived memory",
		ArgsUsage: "<id>",
		Flags:     []cli.Flag{storeFlag(), jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("show takes one lesson id: borg show <id> (see borg list)")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			return runShow(e, s, c.Args().First(), c.Bool("json"))
		},
	}
}

// showJSONMemory is show's memory: the derived memory and the factor
// ranking multiplies the lesson's text score by.
type showJSONMemory struct {
	jsonMemory
	RankingFactor float64 `json:"ranking_factor"`
	Results       int     `json:"results"`
}

// runShow prints one lesson with its memory.
func runShow(e *env, s *memfs.Store, id string, asJSON bool) error {
	if !domain.ValidID(id) {
		return usageErr("bad lesson id %q: ids look like run-migrations-before-tests-7f3a (see borg list)", id)
	}
	l, err := s.Lesson(id)
	if errors.Is(err, memfs.ErrNotFound) {
		if _, aerr := os.Stat(filepath.Join(s.Dir(), filepath.FromSlash(memfs.ArchivePath(id)))); aerr == nil {
			return fail(exitFail, "lesson %s is archived (%s): a sleep retired it, and no hook asks it; git -C %s log -- %s says when and why", id, memfs.ArchivePath(id), s.Dir(), memfs.ArchivePath(id))
		}
		return fail(exitFail, "no lesson %s in the store (see borg list)", id)
	}
	if err != nil {
		return fail(exitFail, "%v (run borg doctor)", err)
	}
	mems, err := s.Memories([]domain.Lesson{l}, e.getenv("BORG_SESSION"), domain.DefaultWeights)
	if err != nil {
		return err
	}
	m := mems[0]
	l, verdict := redacted(l) // a secret is never printed
	if verdict != "" {
		fmt.Fprintf(e.err, "borg: this lesson is never quoted to an agent: %s (see borg doctor)\n", verdict)
	}
	if asJSON {
		return writeJSON(e, struct {
			Lesson jsonLesson     `json:"lesson"`
			Memory showJSONMemory `json:"memory"`
		}{toJSONLesson(l), showJSONMemory{toJSONMemory(m), rankingFactor(m), sessionResults(m)}})
	}
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	row("id", l.ID)
	row("title", l.Title)
	row("type", l.Type)
	row("confidence", fmt.Sprintf("%.4f", l.Confidence))
	row("importance", fmt.Sprint(l.EffectiveImportance()))
	row("reach", reachOf(l))
	row("author", l.Author)
	row("created", timeString(l.Created))
	row("valid until", timeString(l.ValidUntil))
	row("tags", strings.Join(l.Tags, ", "))
	row("anchors", strings.Join(l.Anchors, ", "))
	for _, k := range l.Links {
		row("link", k.Rel+" "+k.Target)
	}
	row("gist", l.Gist)
	if err := tw.Flush(); err != nil {
		return err
	}
	if l.Body != "" {
		fmt.Fprintf(e.out, "\n%s\n", l.Body)
	}
	fmt.Fprintln(e.out, "\nmemory:")
	tw = tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	row("  uses", fmt.Sprint(m.Uses))
	row("  activation", fmtFloat(m.Activation))
	row("  belief", fmt.Sprintf("Beta(%g, %g), mean %.4f", m.Alpha, m.Beta, m.Mean))
	row("  results", fmt.Sprintf("%d changed (%.3g vouched for by the judge), %d ignored, %d corrected, %d vetoed, %d tested",
		m.Changed, m.Vouched, m.Ignored, m.Corrected, m.Vetoed, m.Tested))
	row("  ranking factor", fmt.Sprintf("%.4f (1 + (mean − ½)·r/(r + %g), r = %d session results; recall multiplies the text score by it)",
		rankingFactor(m), index.EvidenceHalf, sessionResults(m)))
	row("  seed weight", fmtFloat(m.Weight)+" (squash(activation) × (½ + belief); shown, not used in ranking)")
	row("  consolidated", fmt.Sprint(m.Consolidated))
	row("  dormant", fmt.Sprint(m.Dormant))
	return tw.Flush()
}
