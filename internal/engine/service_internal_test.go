package engine

import (
	"context"
	"go/ast"
	"go/parser"
	gotoken "go/token"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getratchet/ratchet/internal/clock"
	"github.com/getratchet/ratchet/internal/store/sqlite"
)

// TestServicesAreUnits walks "add a background duty": every service in
// the list is declared in a file of its own, service_<name>.go, and every
// such declaration is in the list (a duty declared and not listed never
// runs).
func TestServicesAreUnits(t *testing.T) {
	fset := gotoken.NewFileSet()
	files, err := filepath.Glob("service_*.go")
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]string{} // var name -> file
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		var here []string
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == gotoken.VAR {
				for _, s := range g.Specs {
					v := s.(*ast.ValueSpec)
					if lit, ok := v.Values[0].(*ast.CompositeLit); ok && isIdent(lit.Type, "service") {
						here = append(here, v.Names[0].Name)
						declared[v.Names[0].Name] = name
					}
				}
			}
		}
		if len(here) != 1 {
			t.Errorf("%s declares services %v, want exactly one", name, here)
		}
	}
	listed := listedServices(t, fset)
	for name, file := range declared {
		if !slices.Contains(listed, name) {
			t.Errorf("%s declares %s, which the services list (service.go) does not name: it never runs", file, name)
		}
	}
	for _, name := range listed {
		if _, ok := declared[name]; !ok {
			t.Errorf("the services list names %s, which no service_*.go file declares", name)
		}
	}
	for _, s := range services {
		if s.name == "" || s.first == nil || s.every == nil || s.pass == nil {
			t.Errorf("service %q lacks a name, an interval or a pass", s.name)
		}
	}
}

// listedServices reads the names in service.go's services list.
func listedServices(t *testing.T, fset *gotoken.FileSet) []string {
	f, err := parser.ParseFile(fset, "service.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		v, ok := n.(*ast.ValueSpec)
		if !ok || v.Names[0].Name != "services" {
			return true
		}
		for _, el := range v.Values[0].(*ast.CompositeLit).Elts {
			names = append(names, el.(*ast.Ident).Name)
		}
		return false
	})
	if len(names) != len(services) {
		t.Fatalf("read %d names from service.go's list, the list has %d", len(names), len(services))
	}
	return names
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// TestServicesRunOnTimersOfTheirOwn: a service whose pass is slow delays
// no other; each runs on its own timer.
func TestServicesRunOnTimersOfTheirOwn(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ratchet.db"), sqlite.Options{Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := clock.NewFake(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	e, err := New(Config{Store: st, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	inSlow, release, fastRan := make(chan struct{}), make(chan struct{}), make(chan struct{}, 10)
	second := fixed(time.Second)
	list := []service{
		{name: "slow", first: second, every: second, pass: func(context.Context, *Engine) error {
			inSlow <- struct{}{}
			<-release
			return nil
		}},
		{name: "fast", first: second, every: second, pass: func(context.Context, *Engine) error {
			fastRan <- struct{}{}
			return nil
		}},
		{name: "off", first: second, every: second, on: func(*Config) bool { return false }, pass: func(context.Context, *Engine) error {
			t.Error("a service whose on says no ran")
			return nil
		}},
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	e.runServices(ctx, &wg, list)
	waitTimers(t, clk, 2) // "off" arms no timer
	clk.Advance(time.Second)
	<-inSlow
	<-fastRan
	// The slow pass still runs; the fast service arms its next timer and
	// runs again when it fires.
	waitTimers(t, clk, 1)
	clk.Advance(time.Second)
	<-fastRan
	close(release)
	cancel()
	wg.Wait()
}

// waitTimers waits until n timers are armed on clk.
func waitTimers(t *testing.T, clk *clock.Fake, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for clk.Timers() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers armed, want %d", clk.Timers(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
