package storetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
)

// TestCasesCoverTheStore holds the covers lists of the suite to the store
// interfaces, read by reflection, and to the code of the cases, read from
// this package's source: every method of store.Queries and store.Store is
// covered by some case, and every name a case lists is a method that the
// case calls, itself or through the suite's helpers. A new store method
// without a case, or a list that names a method its case no longer
// reaches, fails here.
func TestCasesCoverTheStore(t *testing.T) {
	methods := map[string]string{} // method → interface
	for _, it := range []reflect.Type{reflect.TypeFor[store.Queries](), reflect.TypeFor[store.Store]()} {
		for m := range it.Methods() {
			methods[m.Name] = "store." + it.Name()
		}
	}
	reached := reachedCalls(t)

	covered := map[string]bool{}
	names := map[string]bool{}
	for _, tc := range cases {
		if names[tc.name] {
			t.Errorf("two cases are named %s", tc.name)
		}
		names[tc.name] = true
		fn := runtime.FuncForPC(reflect.ValueOf(tc.fn).Pointer()).Name()
		fn = fn[strings.LastIndex(fn, ".")+1:]
		if len(tc.covers) == 0 {
			t.Errorf("case %s covers no method", tc.name)
		}
		for i, m := range tc.covers {
			if _, ok := methods[m]; !ok {
				t.Errorf("case %s covers %s, which is not a method of store.Queries or store.Store", tc.name, m)
				continue
			}
			if slices.Contains(tc.covers[:i], m) {
				t.Errorf("case %s lists %s twice", tc.name, m)
			}
			if !reached[fn][m] {
				t.Errorf("case %s covers %s, but %s never calls it", tc.name, m, fn)
			}
			covered[m] = true
		}
	}
	for m, it := range methods {
		if !covered[m] {
			t.Errorf("%s.%s is covered by no case of the suite: add a case, or name it in the covers of the case that checks it", it, m)
		}
	}
}

// reachedCalls parses the package's non-test files and returns, for each
// function, the names of the methods it calls, itself or through the
// package's other functions it refers to.
func reachedCalls(t *testing.T) map[string]map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]map[string]bool{} // function → methods it calls itself
	refs := map[string][]string{}         // function → identifiers in its body
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if calls[name] == nil {
				calls[name] = map[string]bool{}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CallExpr:
					if se, ok := n.Fun.(*ast.SelectorExpr); ok {
						calls[name][se.Sel.Name] = true
					}
				case *ast.Ident:
					refs[name] = append(refs[name], n.Name)
				}
				return true
			})
		}
	}
	reached := map[string]map[string]bool{}
	for fn := range calls {
		out := map[string]bool{}
		seen := map[string]bool{fn: true}
		todo := []string{fn}
		for len(todo) > 0 {
			g := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			for m := range calls[g] {
				out[m] = true
			}
			for _, r := range refs[g] {
				if _, ok := calls[r]; ok && !seen[r] {
					seen[r] = true
					todo = append(todo, r)
				}
			}
		}
		reached[fn] = out
	}
	return reached
}
