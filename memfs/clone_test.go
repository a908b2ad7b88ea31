package memfs

import (
	"errors"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func TestPickBranch(t *testing.T) {
	h := plumbing.NewHash("8d2a7c0e2b5f1c7f1f0a6a3b4e5d6c7b8a9f0e1d")
	branch := func(name string) *plumbing.Reference {
		return plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), h)
	}
	head := func(name string) *plumbing.Reference {
		return plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(name))
	}
	tests := []struct {
		name    string
		refs    []*plumbing.Reference
		want    string // short branch name; "" for an error
		wantErr error
	}{
		{"empty remote", nil, "", errEmptyRemote},
		{"only tags", []*plumbing.Reference{plumbing.NewHashReference("refs/tags/v1", h)}, "", errEmptyRemote},
		{"HEAD names an existing branch", []*plumbing.Reference{head("trunk"), branch("main"), branch("trunk")}, "trunk", nil},
		{"HEAD names a missing branch: main", []*plumbing.Reference{head("master"), branch("main"), branch("dev")}, "main", nil},
		{"no HEAD: main before master", []*plumbing.Reference{branch("master"), branch("main")}, "main", nil},
		{"no HEAD: master", []*plumbing.Reference{branch("master"), branch("dev")}, "master", nil},
		{"the only branch", []*plumbing.Reference{head("master"), branch("memory")}, "memory", nil},
		{"the only branch beside sleep branches", []*plumbing.Reference{branch("borg/sleep/2026-11-30"), branch("memory")}, "memory", nil},
		{"several, none chosen", []*plumbing.Reference{branch("a"), branch("b")}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pickBranch(tt.refs)
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
			case tt.want == "":
				if err == nil {
					t.Fatalf("picked %s, want an error", got)
				}
			case err != nil:
				t.Fatal(err)
			case got.Short() != tt.want:
				t.Fatalf("picked %s, want %s", got.Short(), tt.want)
			}
		})
	}
}

func TestParseLsRemote(t *testing.T) {
	out := "ref: refs/heads/trunk\tHEAD\n" +
		"8d2a7c0e2b5f1c7f1f0a6a3b4e5d6c7b8a9f0e1d\tHEAD\n" +
		"8d2a7c0e2b5f1c7f1f0a6a3b4e5d6c7b8a9f0e1d\trefs/heads/main\n" +
		"8d2a7c0e2b5f1c7f1f0a6a3b4e5d6c7b8a9f0e1d\trefs/heads/trunk\n"
	got, err := pickBranch(parseLsRemote([]byte(out)))
	if err != nil || got.Short() != "trunk" {
		t.Fatalf("picked %s, %v; want trunk (the remote's HEAD)", got, err)
	}
	if _, err := pickBranch(parseLsRemote(nil)); !errors.Is(err, errEmptyRemote) {
		t.Fatalf("empty listing: %v, want errEmptyRemote", err)
	}
}
