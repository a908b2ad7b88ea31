// Package gitobj is borg's own reader and writer of git objects: blobs,
// trees and commits in a repository's object directory.
//
// What it writes is only what is immutable and content-addressed: loose
// objects, and packs with their indexes. A Writer collects the objects of
// one commit (WriteTree edits a tree as bytes, only along the changed
// paths) and writes them at Flush, each as a loose object, or all as one
// pack when there are PackAtLeast or more. A loose object larger than
// StoreRawAbove (a large tree, which is mostly hashes that barely
// compress, or a large blob such as a log file) is written in zlib's
// stored blocks, uncompressed: a copy to write and a copy to read, and
// git gc compresses it when it packs; smaller ones are compressed as git
// compresses them. An object is written by an atomic rename, so a reader
// sees it whole or not at all, and one already present is left as it is.
// Everything git shares between processes it leaves to git, which the
// store runs: refs and their reflogs, the index, git's lock files, config
// and transport. Objects it writes are reachable only once git moves a
// ref to them.
//
// Objects.Read reads an object from its loose file or from a pack, whose
// index it maps and searches in place; it resolves deltas of either kind.
// What it cannot read (an index of another version) it reports not found,
// for the caller to read through another git implementation.
//
// It exists for speed: a commit costs what changed, with no git process
// started and no pack index read whole, which matters when a commit
// touches a tree of one entry per lesson and every learn reads those
// trees. Ids are computed with crypto/sha1 over git's object header and
// content, so an object borg writes is the object git would write, with
// the same id; collision detection guards objects received from others,
// which this package only reads. Its tests check what it writes with git
// fsck --strict and git cat-file, and what it reads against what git
// cat-file reads from packs git made.
//
// It depends on nothing of the store, only on the standard library and
// fsutil; SHA-256 repositories are not its concern (the store refuses
// them before opening).
package gitobj
