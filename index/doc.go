// Package index is borg's derived, rebuildable search state: the catalog
// (lesson records, link graph and lexical postings built with bleve's
// English analysis), the vector sidecar and its embedder, and the retrieval
// pipeline (arms → weighted RRF → usefulness → MMR). Deleting the store's
// .borg/ folder loses nothing: the index rebuilds what it needs.
//
// # Use
//
//	ix, err := index.Open(".borg/index", index.NewNGramEmbedder(index.NGramOptions{}), index.Options{})
//	st, err := ix.SyncStamp(lessons, treeHash) // only changed lessons are redone
//	hits, err := ix.Search(ctx, index.Query{Text: "…", K: 5, Repo: tag, Useful: u})
//	ix.Close()
//
// NewMemory builds the same index in memory (evaluation, tests). A process
// whose Stamp matches the store may Search right after Open, without reading
// the lessons: the catalog holds what retrieval needs. SyncFiles syncs from
// a listing of the lesson files' stamps (reading only those whose stamp
// moved); SyncChanged from a known change set since the index's stamp (the
// files git says changed), without a listing, to the same state.
//
// # Files under the directory Open is given
//
//   - catalog.bin: the catalog's base segment: per lesson its content
//     hash, title, gist, type, reach, links and field lengths, the
//     screen's verdict (Options.Screen: why a lesson is never quoted, a
//     secret or instruction-like text), the link graph, and the lexical
//     postings of each text field (catalog.go); rebuilt whole when
//     lexicalVersion or the screen's id changes.
//   - catalog.delta: the catalog's delta segment (segment.go): the lessons
//     added or changed since the base, in the same format, the base
//     lessons they replaced or that were deleted (tombstones), and the
//     live lessons' BM25 statistics. A sync rewrites only it, at a cost
//     proportional to what changed and to the delta (SyncChanged finds the
//     changed lessons by binary search and touches no other, syncdelta.go);
//     past a bound (mergeDue) a sync merges it into a new base, unless
//     Options.DeferMerge (a hook) leaves the merge to a background reindex.
//   - vectors.bin and vectors.delta: the vector sidecar's base and delta
//     (vector.go, vecseg.go), keyed by (lesson id, content hash, embedder
//     id); another embedder id drops them whole. The base's keys are read
//     in place through their offsets: a hook wants the vectors of a few
//     hits (MMR) and the hash of what it re-embeds, not 100,000 keys.
//   - vectors.behind: the lessons hooks' syncs changed without embedding
//     them (Options.DeferVectors), one id a line; absent when none lag.
//   - lock: taken by Sync only.
//
// Every file is written whole with memfs.WriteFileAtomic (the sidecar's
// base streamed with memfs.WriteFileAtomicFunc), never changed in place; a delta names the base it applies to and is read before it, so a
// reader sees a committed state. The bases are synced to disk; the deltas
// are not (deltaWrite): a delta a power cut tore fails its checksums,
// which cover it whole and are checked at open, and the index falls back
// to its base and older stamp, which the next sync brings up to date. A query maps the files and reads only
// what it touches: a process searches right after Open without decoding
// them (with Options.LazyVectors, a hook's, the sidecar is not even mapped
// until a call needs vectors), and any number of processes search while
// one syncs. A second
// writer waits Options.LockWait for the lock, then keeps its sync in
// memory (SyncStats.FallbackLexical), so a hook never hangs on another
// process.
//
// Verify reads every segment whole and checks them (borg doctor). A sync
// checks the catalog delta's checksum before it copies its postings, and
// the base's before a merge copies the base's; SyncFiles and SyncStamp,
// which cost the store anyway, check both. Every sync that reads the
// vector sidecar's keys whole checks their checksum and order first
// (vectorsVerified). SyncChanged's fast path, the hook's sync after a
// change, leaves the catalog base's body and the sidecar's keys to those:
// it reads a few of either, each read bounds-checked. Until then a search
// reads them unchecked too (a corrupt key misnames a vector, nothing
// worse), and so is the embedder's corpus state the sidecar carries.
//
// A hook's sync (Options.DeferVectors) writes the catalog's delta alone:
// the lessons it changed keep no vector, or an older one, until a sync
// without it embeds them. Before its delta it adds their ids to a mark
// (vectors.behind); the next sync that embeds, or CatchUpVectors for a
// command whose catalog is up to date, brings those lessons' vectors in
// line, compares every lesson's only when the sidecar still does not
// match the catalog (a lesson an embedder failed on), and removes the
// mark. A refit left due is done by a sync from a listing.
//
// bleve's own index (scorch) is not used: linking it slows every process's
// start-up measurably (it builds Levenshtein automata in an init function;
// BENCHMARKS.md), and its bolt file would be one more lock on the query
// path.
// bleve's analysis chain is used as it is (lexical.go); a sync's term
// cache splits ASCII text into words itself, by the same rules, and
// leaves other text to bleve's tokenizer (termCache).
//
// # Pipeline (Search)
//
//   - lexical: BM25 (k1 0.9, b 0.4) over the lesson's whole text, plus
//     weighted bonuses for title, gist and tag matches; bleve's English
//     analysis (Unicode words, possessives, lower case, stop words, Porter
//     stemming), tokens of 100 runes or more dropped, and an identifier
//     (pay_db_stage, api.v2, flags.yaml) indexed whole and as its words.
//   - vector: cosine over the sidecar, brute force (column-major, one pass
//     per non-zero query component). The default embedder hashes character
//     3–5-grams into 512 signed dimensions with corpus IDF (embed.go); an
//     HTTP embedder can call a local OpenAI-compatible or Ollama endpoint.
//   - salience: the text arms' candidates that have uses, by ln(1+uses) ×
//     belief mean, tied lessons sharing one rank and the arm silent when no
//     lesson stands apart. Off by default (weight 0): usefulness already
//     enters once, bounded, below; as a rank-fused arm it let one ignored
//     result outvote the best text match (BENCHMARKS.md).
//   - lateral: personalized PageRank over lesson links from the best fused
//     hits (lateral.go), each link at the strength it earned (supersedes 1,
//     written by a person 0.6, derived by sleep 0.3), each lesson's vote
//     scaled by its strongest link; it never lifts a lesson over the best
//     text hit, and is silent without a graph.
//   - fusion: domain.FuseArms with domain.RRFK; arm weights ArmWeights.
//   - usefulness: each lesson's fused score is multiplied by 1 + (x − ½) ×
//     r/(r + EvidenceHalf), x its belief's mean (MeanWeight) or the
//     session's Thompson draw (Weight), r its session results: exactly 1
//     without results (a lesson ranks as its text matches), within the
//     seed's (0.5, 1.5) temper with many. A lesson is over the bar when
//     fused × MeanWeight ≥ Query.Bar (default DefaultBar = 0.25) × the best
//     candidate's; those over it come first, ordered by fused × Weight,
//     then the rest by fused × MeanWeight. Absent lessons are neutral.
//   - relevance (relevance.go): each lexical candidate's share of its own
//     title and gist that the query covers, IDF³-weighted with a prior of
//     one word only it holds, times MeanWeight: Hit.Relevance, one scale for
//     every store size and query length. A hit under Query.Floor (default
//     DefaultFloor) or under RelativeCut of the best hit's relevance is
//     Weak: a hook's query (OnlyOverBar) drops it, so a hook with nothing
//     over the floor says nothing; a listing keeps it, marked. MeanWeight is
//     under 1.5, so a hook's search whose best text share times 1.5 is under
//     the floor ends after the lexical arm (noneCanClear): the usual Stop
//     asks nothing, and reads no usefulness and no claim to know it.
//   - supersession: a lesson is superseded by the lessons that declare or
//     were given (sleep) a supersedes link to it, and, at query time, by a
//     strictly newer hit that writes another value into its slot, in the
//     same words or in others (domain.Rewrites, supersedeBySlot). A hit
//     over the floor that no hit supersedes is looked up in the whole
//     store too, among the lexical matches of its own gist, and a newer
//     lesson rewriting it found there joins the hits (supersedeFromStore).
//     A successor among the hits takes the match of a lesson over the
//     floor it supersedes, and its score when that one matched better; the
//     superseded one goes just under it (capSuperseded), before MMR.
//   - MMR (domain.ApplyMMR, λ 0.5) over the hits over the bar, relevance
//     min-max scaled; a superseded lesson is then moved below the lesson
//     that supersedes it.
//   - exploration (Query.Explore, a hook's limited slots, two or more):
//     when none of the K hits is a lesson no session has asked yet, the
//     best such lesson over the bar and the floor takes the last slot (exploreSlot), so a
//     new lesson that matches the work gets asked and its usefulness can be
//     learned; without it, proven lessons kept new ones out for good on a
//     large team (`borg eval learning`, BENCHMARKS.md).
//   - reach: a repo:<tag> lesson is a candidate only when Query.Repo is tag.
//     A dormant lesson stays a candidate (Hit.Dormant says it is): dormancy
//     measures disuse, not usefulness, and removing dormant lessons cost
//     0.02 nDCG@10 and 0.15 Recall@100 on a replayed log (BENCHMARKS.md).
//
// EvalRetrieval (eval.go) runs BEIR-layout folders through the same Search.
package index
