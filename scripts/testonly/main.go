// Command testonly lists the exported functions and methods of the module
// that no non-test code uses: declared in a non-test file, called (if at
// all) only from _test.go files. Such a function is either wired where the
// product wants it or removed with its tests.
//
//	go run ./scripts/testonly            # the whole module
//	go run ./scripts/testonly ./domain/ ./hooks/...
//
// It type-checks the module's packages from source (go/parser, go/types;
// `go list -export` supplies the export data of the standard library and
// the dependencies) and records every use of a function or method object
// in non-test files, uses inside the function's own body excepted. What
// does not count as unused:
//
//   - main, init and TestMain;
//   - the functions of a package whose import path ends in "test"
//     (memfstest, hookstest: helpers that exist for tests, like httptest);
//   - a method whose receiver type implements an interface that has a
//     method of that name: one declared in the module or in a package it
//     imports (fmt.Stringer, error, json.Marshaler, http.Handler, io.Writer,
//     sort.Interface, …), since a call through the interface is invisible to
//     the object's uses. A method is counted only by its own object, so one
//     called only through an interface the module never uses still passes:
//     the check errs towards silence there. Unwrap, Is and As count as
//     package errors' (its interfaces are not exported).
//
// It prints one line per finding (file:line: name) and exits 1 when there
// is any.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	findings, err := Check(".", os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "testonly:", err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Println(f)
	}
	if len(findings) > 0 {
		os.Exit(1)
	}
}

// Finding is one exported function or method no non-test code uses.
type Finding struct {
	Pos  token.Position
	Name string // pkg.Func or pkg.Type.Method
}

func (f Finding) String() string {
	return fmt.Sprintf("%s:%d: %s", f.Pos.Filename, f.Pos.Line, f.Name)
}

// listed is the part of `go list -json` the check reads.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Module     *struct{ Main bool }
	Standard   bool
}

// Check type-checks the module rooted at dir and returns the exported
// functions and methods of the packages matching patterns (all of the
// module's without) that no non-test code of the module uses.
func Check(dir string, patterns []string) ([]Finding, error) {
	all, err := goList(dir, "-export", "-deps", "./...")
	if err != nil {
		return nil, err
	}
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	wanted, err := goList(dir, patterns...)
	if err != nil {
		return nil, err
	}
	c := newChecker(all)
	for _, p := range all {
		if p.Module != nil && p.Module.Main {
			if _, err := c.load(p.ImportPath); err != nil {
				return nil, err
			}
		}
	}
	var out []Finding
	for _, p := range wanted {
		out = append(out, c.unused(p.ImportPath)...)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmpPos(a.Pos, b.Pos)
	})
	return out, nil
}

func cmpPos(a, b token.Position) int {
	if c := strings.Compare(a.Filename, b.Filename); c != 0 {
		return c
	}
	return a.Line - b.Line
}

func goList(dir string, args ...string) ([]listed, error) {
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,GoFiles,Export,Module,Standard"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var ps []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("read go list output: %w", err)
		}
		ps = append(ps, p)
	}
	return ps, nil
}

// checker type-checks the module's packages from source and imports the
// rest from export data, so that one object stands for one function across
// the module.
type checker struct {
	fset    *token.FileSet
	pkgs    map[string]listed
	checked map[string]*checkedPkg
	gc      types.Importer
	// used holds every function object a non-test file uses, with the
	// position of each use.
	used map[*types.Func][]token.Pos
	// ifaces are the interfaces of every package seen.
	ifaces []*types.Interface
}

type checkedPkg struct {
	pkg   *types.Package
	files []*ast.File
	info  *types.Info
}

func newChecker(all []listed) *checker {
	c := &checker{fset: token.NewFileSet(), pkgs: map[string]listed{}, checked: map[string]*checkedPkg{},
		used: map[*types.Func][]token.Pos{}}
	for _, p := range all {
		c.pkgs[p.ImportPath] = p
	}
	c.ifaces = append(c.ifaces, types.Universe.Lookup("error").Type().Underlying().(*types.Interface))
	c.gc = importer.ForCompiler(c.fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := c.pkgs[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	return c
}

// Import implements types.Importer: the module's packages from source,
// the others from export data.
func (c *checker) Import(path string) (*types.Package, error) {
	if p, ok := c.pkgs[path]; ok && p.Module != nil && p.Module.Main {
		cp, err := c.load(path)
		if err != nil {
			return nil, err
		}
		return cp.pkg, nil
	}
	pkg, err := c.gc.Import(path)
	if err == nil {
		c.collectIfaces(pkg)
	}
	return pkg, err
}

func (c *checker) load(path string) (*checkedPkg, error) {
	if cp, ok := c.checked[path]; ok {
		return cp, nil
	}
	p := c.pkgs[path]
	cp := &checkedPkg{info: &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}}
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(c.fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		cp.files = append(cp.files, f)
	}
	conf := types.Config{Importer: c}
	pkg, err := conf.Check(path, c.fset, cp.files, cp.info)
	if err != nil {
		return nil, fmt.Errorf("type-check %s: %w", path, err)
	}
	cp.pkg = pkg
	c.checked[path] = cp
	c.collectIfaces(pkg)
	for id, obj := range cp.info.Uses {
		if fn, ok := obj.(*types.Func); ok {
			fn = fn.Origin()
			c.used[fn] = append(c.used[fn], id.Pos())
		}
	}
	return cp, nil
}

func (c *checker) collectIfaces(pkg *types.Package) {
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok {
			if it, ok := tn.Type().Underlying().(*types.Interface); ok && it.NumMethods() > 0 {
				c.ifaces = append(c.ifaces, it)
			}
		}
	}
}

// unused lists the exported functions and methods of path that no
// non-test file uses outside their own bodies.
func (c *checker) unused(path string) []Finding {
	cp := c.checked[path]
	if cp == nil || strings.HasSuffix(path, "test") {
		return nil
	}
	var out []Finding
	for _, f := range cp.files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() || fd.Name.Name == "TestMain" {
				continue
			}
			fn, _ := cp.info.Defs[fd.Name].(*types.Func)
			if fn == nil || c.usedOutside(fn, fd) || c.satisfies(fn) {
				continue
			}
			out = append(out, Finding{Pos: c.fset.Position(fd.Pos()), Name: qualified(fn)})
		}
	}
	return out
}

func (c *checker) usedOutside(fn *types.Func, fd *ast.FuncDecl) bool {
	for _, p := range c.used[fn] {
		if p < fd.Pos() || p >= fd.End() {
			return true
		}
	}
	return false
}

// errorsMethods are the methods package errors calls through interfaces
// it does not export.
var errorsMethods = []string{"Unwrap", "Is", "As"}

// satisfies reports whether fn is a method through which its receiver
// type implements an interface having a method of fn's name.
func (c *checker) satisfies(fn *types.Func) bool {
	recv := fn.Signature().Recv()
	if recv == nil {
		return false
	}
	if slices.Contains(errorsMethods, fn.Name()) {
		return true
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	ptr := types.NewPointer(t)
	for _, it := range c.ifaces {
		has := false
		for m := range it.Methods() {
			if m.Name() == fn.Name() {
				has = true
				break
			}
		}
		if has && (types.Implements(t, it) || types.Implements(ptr, it)) {
			return true
		}
	}
	return false
}

func qualified(fn *types.Func) string {
	name := fn.Pkg().Name() + "."
	if recv := fn.Signature().Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok {
			name += n.Obj().Name() + "."
		}
	}
	return name + fn.Name()
}
