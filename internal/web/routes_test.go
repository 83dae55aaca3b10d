package web

import (
	"io/fs"
	"strings"
	"testing"
)

// TestDashboardRoutesHaveViews keeps the dashboard's one route list
// (DashboardRoutes, handed to the shell through limits.js) and its view
// modules in step: every route names a module assets/view-<name>.js that
// exports view, and every view module has its route. A new view is then
// three files: its route here, its module, its test.
func TestDashboardRoutesHaveViews(t *testing.T) {
	if err := checkDashboardViews(DashboardRoutes, assetFS); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardViewsCheckFails shows the check catches both misses.
func TestDashboardViewsCheckFails(t *testing.T) {
	extra := append(append([]DashboardRoute{}, DashboardRoutes...), DashboardRoute{Name: "nowhere", Path: "/nowhere"})
	if err := checkDashboardViews(extra, assetFS); err == nil || !strings.Contains(err.Error(), "view-nowhere.js") {
		t.Errorf("a route without a module: got %v, want an error naming view-nowhere.js", err)
	}
	if err := checkDashboardViews(DashboardRoutes[1:], assetFS); err == nil || !strings.Contains(err.Error(), "view-overview.js") {
		t.Errorf("a module without a route: got %v, want an error naming view-overview.js", err)
	}
}

func checkDashboardViews(routes []DashboardRoute, fsys fs.FS) error {
	var problems []string
	named := map[string]bool{}
	for _, r := range routes {
		file := "view-" + r.Name + ".js"
		named[file] = true
		body, err := fs.ReadFile(fsys, "assets/"+file)
		if err != nil {
			problems = append(problems, "route "+r.Path+" has no view module assets/"+file)
			continue
		}
		if !strings.Contains(string(body), "export async function view(") && !strings.Contains(string(body), "export function view(") {
			problems = append(problems, "assets/"+file+" exports no function view")
		}
	}
	entries, err := fs.ReadDir(fsys, "assets")
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, "view-") && strings.HasSuffix(n, ".js") && !named[n] {
			problems = append(problems, "assets/"+n+" is a view module without a route in DashboardRoutes")
		}
	}
	if len(problems) > 0 {
		return &viewsError{problems}
	}
	return nil
}

type viewsError struct{ problems []string }

func (e *viewsError) Error() string { return strings.Join(e.problems, "; ") }
