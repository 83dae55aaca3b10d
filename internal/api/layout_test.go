package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
)

// TestHandlersIsTheRouteTable: handlers.go holds the route table alone;
// each route's handler lives in the file of its area (keys.go,
// endpoints.go, tools.go, runs.go, jobs.go, work.go, observe.go,
// operator.go, schedules.go, failures.go), as wire and the CLI are laid
// out.
func TestHandlersIsTheRouteTable(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "handlers.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name != "table" {
			t.Errorf("handlers.go declares %s: a handler or helper belongs in the file of its area", fn.Name.Name)
		}
	}
}
