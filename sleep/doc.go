// Package sleep is the memory's nightly maintenance: a pure plan built from
// one snapshot of the store and log, then one reviewable git commit per phase
// on a sleep branch (confidence decay, reprieve, near-duplicate merge, frame
// conflicts, edge typing, retention triage, link ager).
//
// # Plan, then apply
//
// LoadSnapshot reads everything a sleep decides from, once: the lessons as
// committed on the store's branch (never the worktree), the outcome log's
// events before the sleep's date, the date of the last sleep merged into that
// branch (its Borg-Sleep commit trailer), and one vector per lesson from the
// embedder. MakePlan is pure over that snapshot: sorted iteration, no clock,
// no map order, so the same snapshot gives the same plan, file bytes and
// commit messages included. Each phase sees the lessons as the phases before
// it left them.
//
// Run applies a plan: one commit per phase that changes a file, on
// borg/sleep/<date>, through memfs's plumbing commit (the worktree and the git
// index are untouched) with a compare-and-swap on the branch ref. A commit is
// stamped with the sleep's date plus its phase number in seconds, never the
// wall clock, so the same snapshot and date give the same commit ids. Two
// racing sleeps end with one winner and one clean ErrRaced; a sleep killed
// between phases leaves the branch at a complete phase commit, and a rerun
// verifies that prefix and finishes it. With Apply the branch is merged into
// the store's branch by the git CLI (fast-forward, else a 3-way merge; a
// conflict is aborted and left to a pull request).
//
// # Commit messages
//
// Each commit's subject names the date, the phase and its counts; the body
// states the rule, then one line per decision that changes a file, with the
// scores behind it (the first MessageItems; the diff shows the rest), and
// counts the decisions that change none (Item.NoChange: a refused merge, a
// compress, a guard), which the plan lists; the trailers Borg-Sleep (the
// date), Borg-Sleep-Phase and Borg-Sleep-Base (the commit planned from)
// close it. The next sleep reads "since the last sleep"
// from the latest Borg-Sleep trailer in the store's history.
//
// # The git CLI
//
// gitcli.go runs the git CLI, through the store's runner (memfs.Store.GitCLI),
// for what memfs has no method for: finding the last sleep's trailer, and the
// merge. Everything else goes through memfs (the snapshot's lessons/ in one
// pass through memfs.Store.ReadDirAt).
package sleep
