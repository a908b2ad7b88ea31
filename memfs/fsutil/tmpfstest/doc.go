// Package tmpfstest points a test process's temporary files at memory.
//
// The cmd/borg and memfs suites create thousands of throwaway stores,
// projects and git repositories; on a disk the kernel's work for them (git's
// processes writing objects and indexes, stores copied and removed) is most
// of their time. Memory behaves the same for what they test: rename, hard
// links, locks and file ids work alike on tmpfs, and durability across a
// power loss is not something a test can observe either way.
package tmpfstest
