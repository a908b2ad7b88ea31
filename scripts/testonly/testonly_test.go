package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// core are the packages TestCorePackages holds to the rule: the whole
// module, as `go run ./scripts/testonly` checks it.
var core = []string{"./..."}

// pending are the findings in core known and waiting, each with its reason.
// An entry that no longer shows fails the test too, so the list only
// shrinks.
var pending = map[string]string{}

func TestCorePackages(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module")
	}
	findings, err := Check("../..", core)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, f := range findings {
		seen = append(seen, f.Name)
		if _, ok := pending[f.Name]; !ok {
			t.Errorf("%s: exported, and only tests use it: wire it where the product wants it or remove it with its tests", f)
		}
	}
	for name, why := range pending {
		if !slices.Contains(seen, name) {
			t.Errorf("%s (%s) is used now or gone: take it out of pending", name, why)
		}
	}
}

// TestCheckFindsTestOnly runs the check on a module of its own: a function
// only a test calls is listed, and neither a used one, a method satisfying
// an interface, nor one called from another package is.
func TestCheckFindsTestOnly(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "go.mod", "module example.com/m\n\ngo 1.26\n")
	write(t, dir, "a/a.go", `package a

import "fmt"

func Used() int     { return Helper() }
func Helper() int   { return 1 }
func OnlyTests() int { return 2 }
func Recursive(n int) int {
	if n == 0 {
		return 0
	}
	return Recursive(n - 1)
}

type T struct{}

func (T) String() string { return fmt.Sprint(Used()) }
func (T) Merge()         {}
func (T) Elsewhere()     {}
`)
	write(t, dir, "a/a_test.go", `package a

import "testing"

func TestA(t *testing.T) { _ = OnlyTests(); T{}.Merge() }
`)
	write(t, dir, "b/b.go", `package b

import "example.com/m/a"

func init() { a.T{}.Elsewhere() }
`)
	findings, err := Check(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.Name)
	}
	if want := []string{"a.OnlyTests", "a.Recursive", "a.T.Merge"}; !slices.Equal(got, want) {
		t.Fatalf("findings %v, want %v", got, want)
	}
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
