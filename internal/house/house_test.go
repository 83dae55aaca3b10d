// Package house holds the tests of the code base's own shape: how long its
// functions may grow and that every exported identifier says what it is.
// They read the source with go/parser; nothing here is linked into Ratchet.
package house

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Limits on production functions (every non-test Go file of the module
// outside the test-support packages). A function over maxLines is split
// along the steps it already has; at most maxLong may exceed longLines.
const (
	maxLines  = 100
	longLines = 50
	maxLong   = 25
)

// testSupport are the packages imported only by tests; their long table
// tests are not production code.
var testSupport = []string{
	"internal/store/storetest",
	"internal/store/postgres/pgtest",
	"internal/browsertest",
	"internal/proctest",
	"internal/house",
}

// source is one parsed production file.
type source struct {
	rel  string // path from the module root, slash-separated
	file *ast.File
}

// production parses every production Go file of the module.
func production(t *testing.T) (*token.FileSet, []source) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from the test's directory: %v", err)
	}
	fset := token.NewFileSet()
	var out []source
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, root+string(filepath.Separator)))
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			for _, ts := range testSupport {
				if rel == ts {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		out = append(out, source{rel, f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 50 {
		t.Fatalf("found %d production files; the walk is wrong", len(out))
	}
	return fset, out
}

// funcName is a function's name as a reader looks for it: Recv.Name.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// TestFunctionLength: no production function is longer than maxLines, and at
// most maxLong are longer than longLines. Lines count from "func" to the
// closing brace, doc comment excluded.
func TestFunctionLength(t *testing.T) {
	fset, files := production(t)
	type fn struct {
		where string
		lines int
	}
	var long []fn
	for _, s := range files {
		for _, d := range s.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n > longLines {
				long = append(long, fn{fmt.Sprintf("%s:%d %s", s.rel, fset.Position(fd.Pos()).Line, funcName(fd)), n})
			}
		}
	}
	sort.Slice(long, func(i, j int) bool { return long[i].lines > long[j].lines })
	if len(long) > 0 {
		t.Logf("%d production functions over %d lines (at most %d may be); the longest, %d lines: %s", len(long), longLines, maxLong, long[0].lines, long[0].where)
	}
	for _, f := range long {
		if f.lines > maxLines {
			t.Errorf("%s is %d lines; split it along its steps (at most %d)", f.where, f.lines, maxLines)
		}
	}
	if len(long) > maxLong {
		var b strings.Builder
		for _, f := range long {
			fmt.Fprintf(&b, "\n\t%4d %s", f.lines, f.where)
		}
		t.Errorf("%d production functions are over %d lines; at most %d may be:%s", len(long), longLines, maxLong, b.String())
	}
}

// TestExportedHaveDocComments: every exported function, method, type,
// constant and variable of production code has a doc comment (for a
// grouped const or var, the group's comment or the spec's own). A method
// counts only when its receiver type is exported.
func TestExportedHaveDocComments(t *testing.T) {
	_, files := production(t)
	var missing []string
	for _, s := range files {
		if s.file.Name.Name == "main" {
			continue
		}
		for _, d := range s.file.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc != nil {
					continue
				}
				if d.Recv != nil {
					name := funcName(d)
					if recv, _, _ := strings.Cut(name, "."); !ast.IsExported(recv) {
						continue
					}
				}
				missing = append(missing, s.rel+": func "+funcName(d))
			case *ast.GenDecl:
				if d.Tok == token.IMPORT {
					continue
				}
				for _, spec := range d.Specs {
					switch sp := spec.(type) {
					case *ast.TypeSpec:
						if sp.Name.IsExported() && sp.Doc == nil && d.Doc == nil {
							missing = append(missing, s.rel+": type "+sp.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() && sp.Doc == nil && sp.Comment == nil && d.Doc == nil {
								missing = append(missing, s.rel+": "+d.Tok.String()+" "+n.Name)
							}
						}
					}
				}
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("%d exported identifiers have no doc comment:\n\t%s", len(missing), strings.Join(missing, "\n\t"))
	}
}
