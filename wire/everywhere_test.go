package wire_test

import (
	"bytes"
	"encoding/json"
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/wire"
)

// root is the repository, seen from this package's directory.
const root = ".."

// enum is one closed set of values of this package and the places outside
// Go that list it. Go code ranges over the wire list instead (the scan in
// TestEnumsTypedOnce keeps it so).
type enum struct {
	name   string
	values []string
	// schema and prop name a property of openapi.json (and of the
	// generated TypeScript) whose enum is exactly the list.
	schema, prop string
	// py is the Literal alias of the generated Python types.
	py string
	// js is the constant of the generated internal/web/assets/limits.js
	// ("" when the pages do not need the list).
	js string
	// doc: docs/state-machine.md names every value in backquotes.
	doc bool
	// css: every value has a rule .status-<css><value> in the pages'
	// style sheets, so the dashboard's badge of a new value is drawn on
	// purpose ("" for enums the pages do not draw as badges).
	css string
	// quotedOnly: TestEnumsTypedOnce looks for quoted lists only, since
	// the values are verbs that prose uses ("list, read, cancel, replay").
	quotedOnly bool
}

func values[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func enums() []enum {
	return []enum{
		{name: "job state", values: values(wire.JobStates()), schema: "Job", prop: "state", py: "JobState", js: "JOB_STATES", doc: true, css: ""},
		{name: "attempt outcome", values: values(wire.AttemptOutcomes()), schema: "Attempt", prop: "outcome", py: "AttemptOutcome", js: "ATTEMPT_OUTCOMES", doc: true},
		{name: "gate", values: values(wire.Gates()), schema: "Hold", prop: "gate", py: "HoldGate", js: "GATES", doc: true},
		{name: "circuit state", values: values(wire.CircuitStates()), schema: "Circuit", prop: "state", py: "CircuitState", js: "CIRCUIT_STATES", css: "circuit-"},
		{name: "run state", values: values(wire.RunStates()), schema: "Run", prop: "state", py: "RunState", js: "RUN_STATES"},
		{name: "key scope", values: values(wire.Scopes()), schema: "KeyCreate", prop: "scope", py: "KeyScope", js: "SCOPES"},
		{name: "plan", values: values(wire.Plans()), schema: "MeProject", prop: "plan", py: "MeProjectPlan", js: "PLANS"},
		{name: "schedule overlap", values: values(wire.ScheduleOverlaps()), schema: "Schedule", prop: "overlap", py: "ScheduleOverlap", js: "SCHEDULE_OVERLAPS"},
		{name: "schedule catch-up", values: values(wire.ScheduleCatchUps()), schema: "Schedule", prop: "catchUp", py: "CatchUp", js: "SCHEDULE_CATCH_UPS"},
		{name: "tick outcome", values: values(wire.TickOutcomes()), schema: "ScheduleTick", prop: "outcome", py: "ScheduleTickOutcome", js: "TICK_OUTCOMES", css: "tick-"},
		{name: "bulk action", values: values(wire.BulkActions()), schema: "JobBulk", prop: "action", py: "JobBulkAction", quotedOnly: true},
		{name: "job sort", values: values(wire.JobSorts()), schema: "JobQuery", prop: "sort", py: "JobQuerySort", js: "JOB_SORTS"},
		{name: "endpoint event kind", values: values(wire.EndpointEventKinds()), schema: "EndpointEvent", prop: "kind", py: "EndpointEventKind", js: "ENDPOINT_EVENT_KINDS"},
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEnumsEverywhere walks "add a value" for every enum of this package:
// each value must be in the OpenAPI document, the generated TypeScript and
// Python types, the pages' limits.js, and where the enum is drawn or
// documented, in the style sheets and docs/state-machine.md. Job states
// must also have a field in JobStateCounts (its JSON keys), a place in
// JobTransitions, and the subsets the pages act on must equal the wire
// predicates. Regenerating (CONTRIBUTING.md) fixes the generated places; a
// failure names the one left to write by hand.
func TestEnumsEverywhere(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []any `json:"enum"`
				} `json:"properties"`
				Required []string `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal([]byte(read(t, "openapi.json")), &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc.Components.Schemas
	ts := read(t, "sdk/typescript/src/schema.ts")
	py := read(t, "sdk/python/ratchet/_types.py")
	limits := jsConsts(t, read(t, "internal/web/assets/limits.js"))
	css := read(t, "internal/web/assets/dashboard.css") + read(t, "internal/web/assets/ratchet.css")
	stateMachine := read(t, "docs/state-machine.md")

	for _, e := range enums() {
		t.Run(e.name, func(t *testing.T) {
			var openapi []string
			for _, v := range schemas[e.schema].Properties[e.prop].Enum {
				s, _ := v.(string)
				openapi = append(openapi, s)
			}
			if !slices.Equal(openapi, e.values) {
				t.Errorf("openapi.json %s.%s enum %q, want %q: regenerate openapi.json", e.schema, e.prop, openapi, e.values)
			}
			if got := tsUnion(tsProps(ts, e.schema)[e.prop]); !slices.Equal(got, e.values) {
				t.Errorf("sdk/typescript/src/schema.ts %s.%s is %q, want %q: regenerate schema.ts", e.schema, e.prop, got, e.values)
			}
			if got := pyLiteral(py, e.py); !slices.Equal(got, e.values) {
				t.Errorf("sdk/python/ratchet/_types.py %s is %q, want %q: regenerate the Python types", e.py, got, e.values)
			}
			if got := limits[e.js]; e.js != "" && !slices.Equal(got, e.values) {
				t.Errorf("limits.js %s is %q, want %q: list it in web.LimitsJS and regenerate limits.js", e.js, got, e.values)
			}
			for _, v := range e.values {
				if e.doc && !strings.Contains(stateMachine, "`"+v+"`") {
					t.Errorf("docs/state-machine.md does not name %s `%s`", e.name, v)
				}
				if e.name == "job state" || e.css != "" {
					if !regexp.MustCompile(`\.status-` + regexp.QuoteMeta(e.css+v) + `\b`).MatchString(css) {
						t.Errorf("no style sheet has a rule for .status-%s%s, the dashboard's badge of %s %s", e.css, v, e.name, v)
					}
				}
			}
		})
	}

	t.Run("job state places", func(t *testing.T) {
		states := values(wire.JobStates())
		// JobStateCounts: one JSON key per state, in lifecycle order, and
		// Set/Get/Total reach every one.
		var c wire.JobStateCounts
		for i, s := range wire.JobStates() {
			c.Set(s, int64(i+1))
		}
		b, _ := json.Marshal(c)
		if keys := jsonKeys(t, b); !slices.Equal(keys, states) {
			t.Errorf("JobStateCounts has JSON keys %q, want one field per state %q", keys, states)
		}
		for i, s := range wire.JobStates() {
			if c.Get(s) != int64(i+1) {
				t.Errorf("JobStateCounts.Get(%s) = %d after Set(%s, %d)", s, c.Get(s), s, i+1)
			}
		}
		if n := len(states); c.Total() != int64(n*(n+1)/2) {
			t.Errorf("JobStateCounts.Total() = %d, want %d", c.Total(), n*(n+1)/2)
		}
		sorted := slices.Sorted(slices.Values(states))
		if got := slices.Sorted(slices.Values(schemas["JobStateCounts"].Required)); !slices.Equal(got, sorted) {
			t.Errorf("openapi.json JobStateCounts requires %q, want %q", got, sorted)
		}
		if got := slices.Sorted(func(yield func(string) bool) {
			for k := range tsProps(ts, "JobStateCounts") {
				if !yield(k) {
					return
				}
			}
		}); !slices.Equal(got, sorted) {
			t.Errorf("schema.ts JobStateCounts has %q, want %q", got, sorted)
		}
		if got := pyKeys(py, "JobStateCounts"); !slices.Equal(got, sorted) {
			t.Errorf("_types.py JobStateCounts has %q, want %q", got, sorted)
		}

		// The state machine: every state is reached or left by a
		// transition, and the diagram draws it.
		for _, s := range wire.JobStates() {
			in := slices.ContainsFunc(wire.JobTransitions, func(tr wire.JobTransition) bool { return tr.From == s || tr.To == s })
			if !in {
				t.Errorf("no transition of wire.JobTransitions reaches or leaves %s", s)
			}
			if !regexp.MustCompile(`(?m)^\s+(\w+ --> ` + string(s) + `|` + string(s) + ` --> \S+)`).MatchString(stateMachine) {
				t.Errorf("docs/state-machine.md's diagram does not draw %s", s)
			}
		}

		// The subsets the pages act on are the wire predicates.
		for name, keep := range map[string]func(wire.JobState) bool{
			"FINISHED_STATES":     wire.JobState.Finished,
			"REPLAYABLE_STATES":   wire.JobState.Replayable,
			"CANCELLABLE_STATES":  wire.JobState.Cancellable,
			"CLAIMABLE_STATES":    wire.JobState.Claimable,
			"UNSUCCESSFUL_STATES": wire.JobState.Unsuccessful,
		} {
			if want := values(wire.JobStatesWhere(keep)); !slices.Equal(limits[name], want) {
				t.Errorf("limits.js %s is %q, want %q: regenerate limits.js", name, limits[name], want)
			}
		}
		// The dashboard draws its tabs, filters and counts from JOB_STATES,
		// which its view kit takes from limits.js.
		if !regexp.MustCompile(`import \{[^}]*\bJOB_STATES\b[^}]*\} from "\./limits\.js"`).MatchString(read(t, "internal/web/assets/console-kit.js")) {
			t.Error("console-kit.js does not import JOB_STATES from limits.js")
		}
	})
}

// TestEnumsTypedOnce fails where a list of two or more values of one enum
// is typed again outside the files generated from it: a Go string literal
// such as "a, b or c", consecutive literals such as []string{"a", "b"} or
// case "a", "b", a SQL list 'a', 'b' in Go code; a quoted list in the
// pages' scripts or the hand-written SDK code. Such code ranges over the
// wire list (or a predicate next to the transitions) instead.
func TestEnumsTypedOnce(t *testing.T) {
	// allowed are the places (a path, or a path and the values) that may
	// type values of an enum, each for a reason.
	allowed := map[string]string{
		// One column per finished outcome: a new outcome needs a column
		// of the history table, and so a migration, anyway.
		"internal/store/sqlstore/history.go: attempt outcome succeeded, failed": "history columns",
		"internal/store/sqlstore/history.go: attempt outcome failed, timed_out": "history columns",
		"internal/store/sqlstore/history.go: job state succeeded, failed":       "history columns (outcomes named like states)",
		// Test support and measuring tools describe or seed particular
		// states on purpose (a seed mix, fixtures, a fault test's verdict).
		"internal/store/storetest/": "test support",
		"internal/bench/":           "the bench's seed mix",
		"internal/chaos/":           "the fault test's verdicts name the states they expect",
	}
	used := map[string]bool{}
	found := map[string]bool{}
	report := func(path, enumName, a, b string) {
		key := path + ": " + enumName + " " + a + ", " + b
		if found[key] {
			return
		}
		found[key] = true
		for k := range allowed {
			if key == k || strings.HasSuffix(k, "/") && strings.HasPrefix(key, k) {
				used[k] = true
				return
			}
		}
		t.Errorf("%s types the %s values %s, %s, ...: range over the wire list or use a predicate next to JobTransitions", path, enumName, a, b)
	}
	type pair struct {
		enum, a, b     string
		quoted, spoken *regexp.Regexp
		quotedOnly     bool
	}
	var pairs []pair
	for _, e := range enums() {
		for _, a := range e.values {
			for _, b := range e.values {
				if a != b {
					q := "[\"'`]"
					pairs = append(pairs, pair{e.name, a, b,
						regexp.MustCompile(q + regexp.QuoteMeta(a) + q + `\s*,\s*` + q + regexp.QuoteMeta(b) + q),
						regexp.MustCompile(`\b` + regexp.QuoteMeta(a) + `(, | or |\|)` + regexp.QuoteMeta(b) + `\b`), e.quotedOnly})
				}
			}
		}
	}
	check := func(path, text string, quoted bool) {
		for _, p := range pairs {
			if !strings.Contains(text, p.a) || !strings.Contains(text, p.b) {
				continue
			}
			re := p.spoken
			if quoted {
				re = p.quoted
			} else if p.quotedOnly {
				continue
			}
			if re.MatchString(text) {
				report(path, p.enum, p.a, p.b)
			}
		}
	}

	// Go: the strings of every non-test file outside package wire.
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "wire" || rel != "." && strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var s scanner.Scanner
		fset := token.NewFileSet()
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, 0)
		var lits bytes.Buffer // consecutive literals, as a quoted list
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			switch tok {
			case token.STRING:
				v, err := strconv.Unquote(lit)
				if err != nil {
					v = lit
				}
				check(rel, v, false)
				check(rel, v, true) // SQL: IN ('a', 'b')
				lits.WriteString(strconv.Quote(v))
			case token.COMMA:
				lits.WriteString(",")
			default:
				check(rel, lits.String(), true)
				lits.Reset()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for key, why := range allowed {
		if !used[key] {
			t.Errorf("allowed list %q (%s) is typed no more: remove it from allowed", key, why)
		}
	}

	// The pages and the hand-written SDK code: quoted lists.
	for _, glob := range []string{"internal/web/assets/*.js", "internal/web/assets/*.html", "sdk/typescript/src/*.ts", "sdk/python/ratchet/*.py"} {
		paths, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range paths {
			rel, _ := filepath.Rel(root, path)
			switch rel {
			case "internal/web/assets/limits.js", "sdk/typescript/src/schema.ts", "sdk/python/ratchet/_types.py":
				continue // generated from wire
			}
			src := read(t, rel)
			check(rel, src, true)
			if strings.HasPrefix(rel, "internal/web/") {
				check(rel, src, false) // and the pages' texts
			}
		}
	}
}

// jsConsts reads the `export const NAME = freeze([...])` lists of limits.js.
func jsConsts(t *testing.T, src string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^export const (\w+) = freeze\((\[.*\])\);$`).FindAllStringSubmatch(src, -1) {
		var list []string
		if json.Unmarshal([]byte(m[2]), &list) == nil {
			out[m[1]] = list
		}
	}
	return out
}

// tsProps reads the properties of one schema of the generated schema.ts:
// name → type text.
func tsProps(src, schema string) map[string]string {
	out := map[string]string{}
	start := strings.Index(src, "\n        "+schema+": {\n")
	if start < 0 {
		return out
	}
	body := src[start:]
	body = body[:strings.Index(body, "\n        };")]
	for _, m := range regexp.MustCompile(`(?m)^            (\w+)\??: (.*);$`).FindAllStringSubmatch(body, -1) {
		out[m[1]] = m[2]
	}
	return out
}

// tsUnion reads a union of string literals: "a" | "b".
func tsUnion(typ string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(typ, -1) {
		out = append(out, m[1])
	}
	return out
}

// pyLiteral reads `Name = Literal["a", "b"]` of the generated _types.py.
func pyLiteral(src, name string) []string {
	m := regexp.MustCompile(`(?m)^` + name + ` = Literal\[(.*)\]$`).FindStringSubmatch(src)
	if m == nil {
		return nil
	}
	return tsUnion(m[1])
}

// pyKeys reads the keys of a TypedDict class of _types.py, sorted.
func pyKeys(src, class string) []string {
	start := strings.Index(src, "\nclass "+class+"(TypedDict):\n")
	if start < 0 {
		return nil
	}
	body := src[start+1:]
	if end := strings.Index(body, "\n\n\n"); end >= 0 {
		body = body[:end]
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^    (\w+): `).FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// jsonKeys lists the keys of a JSON object in their order.
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}
