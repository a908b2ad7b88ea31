package main

import (
	"context"
	"errors"
	"fmt"
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
			return runShow(c.Context, e, s, c.Args().First(), c.Bool("json"))
		},
	}
}

// showJSONMemory is show's memory: the derived memory and the factor
// ranking multiplies the lesson's text score by.
type showJSONMemory struct {
	jsonMemory
	RankingFactor float64 `json:"ranking_factor"`
	Results       int     `json:"results"`
	// SupersededBy names the newer lessons that state the same fact's
	// current value: hooks ask them, not this one.
	SupersededBy []string `json:"superseded_by,omitempty"`
	// UpdatedBy, when none does, names a newer lesson that says this fact
	// changed, as recall reads it: a guess, and hooks ask it instead.
	UpdatedBy string `json:"updated_by,omitempty"`
}

// runShow prints one lesson with its memory.
func runShow(ctx context.Context, e *env, s *memfs.Store, id string, asJSON bool) error {
	if !domain.ValidID(id) {
		return usageErr("bad lesson id %q: ids look like run-migrations-before-tests-7f3a (see borg list)", id)
	}
	l, err := s.Lesson(id)
	archived := false
	if errors.Is(err, memfs.ErrNotFound) {
		// A lesson a sleep retired is shown as it was archived, said so.
		l, err = s.ArchivedLesson(id)
		if errors.Is(err, memfs.ErrNotFound) {
			return fail(exitFail, "no lesson %s in the store (see borg list)", id)
		}
		if err != nil {
			return fail(exitFail, "%v (run borg doctor)", err)
		}
		archived = true
		path := memfs.ArchivePath(memfs.SafeID(id))
		fmt.Fprintf(e.err, "borg: lesson %s is archived (%s): a sleep retired it, and no hook asks it; git -C %s log -- %s says when and why\n", memfs.SafeID(id), path, s.Dir(), path)
	} else if err != nil {
		return fail(exitFail, "%v (run borg doctor)", err)
	}
	mems, err := s.Memories([]domain.Lesson{l}, e.getenv("BORG_SESSION"), domain.DefaultWeights)
	if err != nil {
		return err
	}
	m := mems[0]
	var succ []string
	var update string
	if !archived {
		succ, update = successorsOf(ctx, e, s, id)
	}
	l, verdict := redacted(l) // a secret is never printed
	if verdict != "" {
		fmt.Fprintf(e.err, "borg: this lesson is never quoted to an agent: %s (see borg doctor)\n", verdict)
	}
	if asJSON {
		jl := toJSONLesson(l)
		if archived {
			jl.Path = memfs.ArchivePath(l.ID) // l is redacted: its id fit to print
		}
		return writeJSON(e, struct {
			Lesson   jsonLesson     `json:"lesson"`
			Archived bool           `json:"archived,omitempty"`
			Memory   showJSONMemory `json:"memory"`
		}{jl, archived, showJSONMemory{toJSONMemory(m), rankingFactor(m), sessionResults(m), succ, update}})
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
	if archived {
		row("archived", memfs.ArchivePath(l.ID)+" (a sleep retired it: no hook asks it)")
	}
	if len(succ) > 0 {
		row("superseded by", strings.Join(succ, ", ")+" (a newer value of this fact: hooks ask it instead)")
	}
	if update != "" {
		row("likely updated by", update+" (a newer lesson says this fact changed: hooks ask it instead)")
	}
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

// successorsOf names the newer lessons that rewrite lesson id's fact, as a
// search finds them, or, when none does, its likely update ("" for none).
// The lesson is shown without them, a note on stderr, when the index cannot
// be opened.
func successorsOf(ctx context.Context, e *env, s *memfs.Store, id string) ([]string, string) {
	r, err := openIndex(s, openOptions{progress: e.err, noVectors: true}) // the index alone: show derived the memory itself
	if err != nil {
		fmt.Fprintf(e.err, "borg: whether a newer lesson supersedes %s is not known: %v\n", id, err)
		return nil, ""
	}
	defer r.Close()
	succ, update, err := r.ix.Successors(ctx, id, vetoesIn(s))
	if err != nil {
		fmt.Fprintf(e.err, "borg: whether a newer lesson supersedes %s is not known: %v\n", id, err)
	}
	return succ, update
}

// vetoesIn reads, for a search's rules, which lessons of s a person vetoed
// (borg no): a fact someone said is wrong supersedes and updates nothing,
// as in a search. A lesson whose memory cannot be read is not vetoed.
func vetoesIn(s *memfs.Store) func(string) index.Usefulness {
	return func(id string) index.Usefulness {
		u := index.NeutralUsefulness()
		l, err := s.Lesson(id)
		if err != nil {
			return u
		}
		if mems, err := s.Memories([]domain.Lesson{l}, "", domain.DefaultWeights); err == nil && len(mems) == 1 {
			u.Vetoed = mems[0].Vetoed
		}
		return u
	}
}
