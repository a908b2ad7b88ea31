package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/borg-memory/borg/index"
	"github.com/borg-memory/borg/memfs"
)

func recallCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "recall",
		Usage:     "find the lessons that bear on a query, as the hooks would",
		ArgsUsage: "\"query\"",
		Flags: []cli.Flag{
			storeFlag(), jsonFlag(),
			&cli.IntFlag{Name: "k", Value: 5, Usage: "how many lessons"},
			&cli.StringFlag{Name: "repo", Usage: "repo tag of the session (default: the current git repository's)"},
			&cli.StringFlag{Name: "session", Usage: "session id: orders lessons over the bar by its Thompson draw"},
			&cli.StringFlag{Name: "arms", Usage: "arms to fuse, e.g. lexical,vector or lexical,salience (default " + index.DefaultArmsText() + ")"},
			&cli.BoolFlag{Name: "explain", Usage: "show each arm's rank and the ranking factor usefulness gives"},
			&cli.BoolFlag{Name: "sync", Usage: "re-read every lesson before searching"},
			&cli.BoolFlag{Name: "trace", Usage: "print how long each step took, on stderr"},
		},
		Action: func(c *cli.Context) error {
			shortLived()
			var tr *tracer
			if c.Bool("trace") {
				tr = newTracer(e.err)
			}
			if c.NArg() != 1 || strings.TrimSpace(c.Args().First()) == "" {
				return usageErr("recall takes one query: borg recall \"how do we run migrations\"")
			}
			if c.Int("k") <= 0 {
				return usageErr("--k must be at least 1")
			}
			s, err := openStore(c, e)
			if err != nil {
				return err
			}
			tr.step("store opened", time.Time{})
			// The hooks' floor marks what is weak, so a recall reads as the
			// hooks would ask.
			he := &hookEnv{getenv: e.getenv}
			q := index.Query{Text: c.Args().First(), K: c.Int("k"), Repo: c.String("repo"), Session: c.String("session"), Explain: c.Bool("explain"),
				Floor: he.floor(), Warn: func(msg string) { fmt.Fprintf(e.err, "borg: %s\n", msg) }}
			for _, p := range he.problems {
				// A hook fails open and says nothing; a recall, read by a
				// person, says what it uses instead.
				fmt.Fprintf(e.err, "borg: %s\n", p)
			}
			if !c.IsSet("repo") {
				q.Repo = repoTag()
			}
			if c.IsSet("arms") {
				if q.Arms, err = index.ParseArms(c.String("arms")); err != nil {
					return usageErr("%v", err)
				}
			}
			return runRecall(c, e, s, q, c.Bool("sync"), c.Bool("json"), tr)
		},
	}
}

// recall is borg recall's search: the store's usefulness for q.Session
// (the belief mean without one), every hit, over the bar first.
func (r *retrieval) recall(ctx context.Context, q index.Query) ([]index.Hit, error) {
	q.UsefulFunc = r.usefulFunc(memfs.HashSession(q.Session))
	if q.Links == nil {
		q.Links = r.lessonLinks(time.Now().UnixMilli())
	}
	return r.ix.Search(ctx, q)
}

func runRecall(c *cli.Context, e *env, s *memfs.Store, q index.Query, sync, asJSON bool, tr *tracer) error {
	r, err := openRetrieval(c.Context, s, openOptions{force: sync, progress: e.err, tr: tr})
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	// The index is not closed: the process ends with this command, and its
	// mappings go with it. Unmapping them first would cost a measurable
	// share of a recall (each unmap interrupts every thread of the process).
	if tr != nil {
		start := time.Now()
		q.Trace = func(step string) { tr.step("search: "+step, start) }
	}
	arms := q.Arms
	if arms == (index.ArmWeights{}) {
		arms = index.DefaultArmWeights()
	}
	// A lesson that shares no word with the query, and that sessions did
	// not use with one that does (the lateral arm), is no match however
	// near its vector; without the lexical arm nothing shares a word.
	q.Matched = arms.Lexical > 0
	explain := q.Explain
	hits, err := r.recall(c.Context, q)
	if err != nil {
		return fail(exitFail, "%v", err)
	}
	if arms.Lexical == 0 {
		fmt.Fprintln(e.err, "borg: without the lexical arm no lesson has a relevance (it is the text the lexical arm matches); the order is the arms' alone")
	}
	defer tr.step("printed", time.Time{})
	if asJSON {
		if hits == nil {
			hits = []index.Hit{}
		}
		return writeJSON(e, hits)
	}
	if len(hits) == 0 {
		fmt.Fprintln(e.out, "no lesson matches (borg list shows them all)")
		return nil
	}
	tw := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	if explain {
		fmt.Fprintln(tw, "#\tid\trelevance\tmatch\tscore\tfused\tfactor\tlexical\tvector\tsalience\tlateral\tgist")
	} else {
		fmt.Fprintln(tw, "#\tid\trelevance\tgist")
	}
	for i, h := range hits {
		gist := h.Gist
		if r := []rune(gist); len(r) > 80 {
			gist = string(r[:79]) + "…" // whole characters: a cut rune is no text
		}
		if len(h.SupersededBy) > 0 {
			gist += " (superseded by " + strings.Join(h.SupersededBy, ", ") + ")"
		} else if h.UpdatedBy != "" {
			gist += " (likely updated by " + h.UpdatedBy + ")" // a guess, not a link: hooks ask the update instead
		}
		// The relevance is on the scale the hooks' floor is on; a weak
		// hit is one no hook would hand an agent.
		rel := fmt.Sprintf("%.2f", h.Relevance)
		if h.Weak {
			rel += " weak"
		}
		if explain {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.2f\t%.4f\t%.4f\t%.3f\t%s\t%s\t%s\t%s\t%s\n", i+1, h.ID, rel, h.Match, h.Score, h.Fused, h.Weight,
				rank(h.Ranks.Lexical), rank(h.Ranks.Vector), rank(h.Ranks.Salience), rank(h.Ranks.Lateral), gist)
		} else {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, h.ID, rel, gist)
		}
	}
	return tw.Flush()
}

func rank(r int) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprint(r)
}
