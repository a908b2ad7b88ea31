// Package memfs is the store on disk: the memhtml codec (lesson files as
// HTML, parsed with goquery), the lesson files under lessons/ and archive/,
// the append-only outcome log (log/<node>.jsonl and .borg/local/), and the git
// plumbing (go-git in process; the git CLI only where go-git cannot do the job).
package memfs
