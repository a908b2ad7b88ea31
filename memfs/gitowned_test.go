package memfs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoDirectGitStateWrites reads every non-test Go file of the module
// and fails when one writes git's shared state itself (docs/git.md): the
// index (.git/index, .git/sharedindex.*), a ref or git's lock files. It
// looks for two things. Text that only a hand-written index needs (the
// index's signature anywhere, the shared index's name in a file that
// writes files). And any call that creates,
// writes, renames or removes a file whose path is built from the git
// directory (gitDir, commonDir or a ".git" element), followed through the
// function's local assignments, unless the path is under objects/: borg
// writes its immutable objects itself.
func TestNoDirectGitStateWrites(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	writers := map[string]bool{
		"os.WriteFile": true, "os.Create": true, "os.OpenFile": true, "os.Remove": true,
		"os.RemoveAll": true, "os.Rename": true, "os.Link": true, "os.Symlink": true,
		"os.Truncate": true, "os.Chtimes": true, "os.Mkdir": true,
		"WriteFileAtomic": true, "WriteFileAtomicFunc": true, "writeAtomic": true, "linkNew": true,
		"memfs.WriteFileAtomic": true, "memfs.WriteFileAtomicFunc": true,
	}
	var checked int
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		checked++
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, p, src, 0)
		if err != nil {
			return err
		}
		// The index's signature is for writing an index. The shared index's
		// name may be read (its size, say) by a file that writes nothing.
		bad := []string{`"DIRC"`}
		if writesFiles(f, writers) {
			bad = append(bad, "sharedindex")
		}
		for _, b := range bad {
			if strings.Contains(strings.ToLower(string(src)), strings.ToLower(b)) {
				t.Errorf("%s mentions %s: git writes its own index (docs/git.md)", rel, b)
			}
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			assigns := localAssigns(fn.Body)
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 || !writers[callName(call.Fun)] {
					return true
				}
				args := call.Args[:1]
				if callName(call.Fun) == "os.Rename" || callName(call.Fun) == "os.Link" || callName(call.Fun) == "linkNew" {
					args = call.Args[:min(2, len(call.Args))]
				}
				for _, a := range args {
					if git, objects := gitPath(a, assigns, map[string]bool{}); git && !objects {
						t.Errorf("%s: %s writes a path in the git directory (%s): git's shared state is written by git (docs/git.md)",
							fset.Position(call.Pos()), callName(call.Fun), exprString(src, fset, a))
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked %d files: the walk missed the module", checked)
	}
}

// writesFiles reports whether f calls any of writers.
func writesFiles(f *ast.File, writers map[string]bool) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && writers[callName(call.Fun)] {
			found = true
		}
		return !found
	})
	return found
}

// localAssigns maps each local name to the expressions assigned to it.
func localAssigns(body *ast.BlockStmt) map[string][]ast.Expr {
	out := map[string][]ast.Expr{}
	ast.Inspect(body, func(n ast.Node) bool {
		switch a := n.(type) {
		case *ast.AssignStmt:
			for i, l := range a.Lhs {
				id, ok := l.(*ast.Ident)
				if !ok {
					continue
				}
				if len(a.Rhs) == len(a.Lhs) {
					out[id.Name] = append(out[id.Name], a.Rhs[i])
				} else if len(a.Rhs) == 1 {
					out[id.Name] = append(out[id.Name], a.Rhs[0])
				}
			}
		case *ast.ValueSpec:
			for i, id := range a.Names {
				if i < len(a.Values) {
					out[id.Name] = append(out[id.Name], a.Values[i])
				}
			}
		}
		return true
	})
	return out
}

// gitPath reports whether e (through the local names it uses) is built
// from the git directory, and whether it is under objects/.
func gitPath(e ast.Expr, assigns map[string][]ast.Expr, seen map[string]bool) (git, objects bool) {
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if x.Sel.Name == "gitDir" || x.Sel.Name == "commonDir" {
				git = true
			}
		case *ast.BasicLit:
			if v, err := strconv.Unquote(x.Value); err == nil {
				switch {
				case v == ".git" || strings.HasPrefix(v, ".git/"):
					git = true
				case v == "objects":
					objects = true
				}
			}
		case *ast.Ident:
			if !seen[x.Name] {
				seen[x.Name] = true
				for _, rhs := range assigns[x.Name] {
					g, o := gitPath(rhs, assigns, seen)
					git, objects = git || g, objects || o
				}
			}
		}
		return true
	})
	return git, objects
}

// callName is the called function as written: "os.Remove", "linkNew".
func callName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
		return f.Sel.Name
	}
	return ""
}

func exprString(src []byte, fset *token.FileSet, e ast.Expr) string {
	return string(src[fset.Position(e.Pos()).Offset:fset.Position(e.End()).Offset])
}
