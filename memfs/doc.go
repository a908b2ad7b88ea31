// Package memfs is the store on disk: the memhtml codec (lesson files as
// HTML, parsed with goquery), the lesson files under lessons/ and archive/,
// the append-only outcome log (log/<node>.jsonl and .borg/local/), and the
// store's git layer: borg reads loose objects and packs and writes blobs,
// trees, commits and packs itself (its own git object reader and writer
// is the package memfs/gitobj), opens the repository itself (gitrepo.go;
// config files read by gitcli.ParseConfig), reads what its own reader
// leaves through git cat-file, and leaves refs, the index, git's locks,
// config and transport to the git CLI.
//
// # Layout
//
//	lessons/<bb>/<id>.html  one lesson per file, in its bucket (Parse, Render, LessonPath)
//	archive/<bb>/<id>.html  archived lessons (sleep moves them, CommitOnRef)
//	log/<node>.jsonl    this machine's shared outcome log (Store.Append)
//	.gitattributes      log/*.jsonl merge=union
//	.gitignore          .borg/
//	.borg/node          this machine's node id
//	.borg/local/        the local log: placebo events, evidence text, and
//	                    everything when BORG_SHARE_OUTCOMES=off
//	.borg/cache/        the incremental ledger cache (Store.LoadLedger)
//	.borg/tmp/          temp files of atomic writes
//	.borg/write.lock    the write lock; .borg/journal.json its journal
//	.borg/changes.json  the lessons borg's last commits changed (ChangedSince)
//
// # Writes
//
// Lesson files are written atomically (temp file, fsync, rename). Log lines
// are appended one write per line under flock, and a torn last line left by
// a killed writer is closed before the next append, so only that line is
// lost. Store.Commit commits the named paths only, building the tree from
// the last commit and the files borg wrote (never scanning the worktree),
// moves the branch with git update-ref and stages the paths with git
// update-index, the two at once. Store.CommitOnRef does the same on any ref without touching
// the worktree or the index, with a compare-and-swap on the ref
// (ErrRefMoved).
//
// borg writes objects and leaves git's shared state to git (docs/git.md):
// refs and their reflogs, the index in whatever format the repository
// uses, git's lock files, config and transport. A commit costs what
// changed (memfs/gitobj): trees are edited as bytes, only along the changed
// paths, a loose object over 64 KiB (a large tree or blob) is written in
// zlib's stored blocks rather than compressed, and a commit of many files
// writes one pack (with its index) instead of a loose object each. Loose
// objects are renamed in without fsync, as git writes them. A store may be
// a linked worktree; SHA-256 and reftable repositories are refused
// (ErrUnsupportedRepo).
//
// Every write to git runs under one crash-safe discipline (writes.go,
// gitlock.go): the store's write lock (.borg/write.lock, an flock, kept
// open by the git commands borg runs under it) and a journal
// (.borg/journal.json) written before any file. The next writer finishes
// what a killed one left, so the git index never stays disagreeing with
// HEAD; Store.Update writes files and commits them as one such step.
// CheckLocks, IndexMismatches, ResetIndex and Uncommitted are doctor's full
// checks and repairs.
//
// # Reads
//
// Store.ReadEvents returns the union of every log, deduplicated by event id
// and sorted, and reports skipped lines (LogReport). Store.LoadLedger keeps
// the folded domain.Ledger in .borg/cache and folds only the lines appended
// since; Store.Memories derives memory from it.
//
// # Screening
//
// Screen says why a lesson must never be quoted to an agent: a secret
// (FindSecret: gitleaks' maintained default rules, held as static data in
// gitleaks_rules.go — a test holds it to gitleaks' own parse — and each
// compiled on the first text that holds one of its keywords, plus the few
// formats secret.go adds and documents) in any field, its
// id included, or text addressed to the agent (FindInstruction: a short
// list of prompt-injection phrasings, instruction.go). Reasons name the
// rule or phrase and the field, never the text. borg learn refuses such
// lessons; the index keeps each lesson's verdict.
//
// Only git.go, gitrepo.go, changes.go and attribfast.go import go-git
// (never its root package, which links its transports and OpenPGP:
// gitrepo.go) and only codec.go imports goquery. No non-test file imports gitleaks: secretdetect.go runs
// gitleaks' rule data with gitleaks' semantics, and tests hold it to
// gitleaks' own detector.
package memfs
