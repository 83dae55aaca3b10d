package house

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Limits on the pages' JavaScript (internal/web/assets, subfolders too): a
// file over jsMaxFileLines is split into modules along its parts, a
// function over jsMaxFuncLines along its steps.
const (
	jsMaxFileLines = 600
	jsMaxFuncLines = 120
)

// jsOver are the functions over jsMaxFuncLines and the files over
// jsMaxFileLines that are still to be split, with their length today. The
// list may only shrink: an entry that grew, or one no longer over the
// limit, fails the test, so it is taken out when its code is split. It is
// empty: a new entry needs a reason written here.
var jsOver = map[string]int{}

// TestJavaScriptShape: no asset file over jsMaxFileLines lines and no
// function over jsMaxFuncLines, but those of jsOver, which may not grow.
func TestJavaScriptShape(t *testing.T) {
	root := filepath.Join(moduleRoot(t), "internal", "web", "assets")
	var over []string
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".js") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(moduleRoot(t), path)
		rel = filepath.ToSlash(rel)
		check := func(key string, n, limit int, what string) {
			if n <= limit {
				return
			}
			seen[key] = true
			if was, ok := jsOver[key]; ok && n <= was {
				return
			}
			over = append(over, fmt.Sprintf("%s is %d lines; %s (at most %d)", key, n, what, limit))
		}
		check(rel, strings.Count(string(src), "\n"), jsMaxFileLines, "split it into modules along its parts")
		for _, f := range jsFunctions(string(src)) {
			check(rel+" "+f.name, f.lines, jsMaxFuncLines, fmt.Sprintf("the function at line %d; split it along its steps", f.line))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range jsOver {
		if !seen[key] {
			over = append(over, key+" is within its limit now: take it out of jsOver")
		}
	}
	sort.Strings(over)
	for _, o := range over {
		t.Error(o)
	}
}

// jsFunc is one function found by jsFunctions.
type jsFunc struct {
	name  string
	line  int // 1-based line of its start
	lines int // from the start line to the line of its closing brace
}

// jsFuncStart finds where a function starts, at the start of a line (any
// indentation): a declaration ("function name(", async, export), a method
// of an object or class ("name(...) {"), or an arrow function with a block
// body assigned to a name ("const name = (...) => {", "name = async x => {").
// Arrow functions passed as arguments are not counted on their own: their
// lines count in the function around them.
var jsFuncStart = regexp.MustCompile(`(?m)^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?function\*?[ \t]+([\w$]+)[ \t]*\(|` +
	`^[ \t]*(?:async[ \t]+)?([\w$]+)[ \t]*\([^()\n]*\)[ \t]*\{[ \t]*$|` +
	`^[ \t]*(?:export[ \t]+)?(?:(?:const|let|var)[ \t]+)?([\w$]+)[ \t]*=[ \t]*(?:async[ \t]+)?(?:\([^\n]*\)|[\w$]+)[ \t]*=>[ \t]*\{`)

// jsKeywords look like a method head ("if (x) {") but are not one.
var jsKeywords = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "with": true, "function": true, "return": true}

// jsFunctions lists the functions of a module and their length in lines:
// from the line a function starts on (jsFuncStart) to the line of the brace
// that closes its body. Braces are matched by a scan that skips comments,
// strings and the text of template literals (their ${...} is code); a
// regular expression literal with an unmatched brace would confuse it, and
// the assets have none.
func jsFunctions(src string) []jsFunc {
	match := jsBraces(src)
	lineOf := func(pos int) int { return strings.Count(src[:pos], "\n") + 1 }
	var fns []jsFunc
	for _, m := range jsFuncStart.FindAllStringSubmatchIndex(src, -1) {
		name := ""
		for g := 1; g <= 3; g++ {
			if m[2*g] >= 0 {
				name = src[m[2*g]:m[2*g+1]]
			}
		}
		if jsKeywords[name] {
			continue
		}
		// The body is the first brace after the head's parameter list,
		// skipping a default value's braces in it.
		open := jsBodyBrace(src, m[0], match)
		if open < 0 {
			continue
		}
		close, ok := match[open]
		if !ok {
			continue
		}
		start := lineOf(m[0])
		if src[m[0]] == '\n' {
			start++
		}
		fns = append(fns, jsFunc{name: name, line: start, lines: lineOf(close) - start + 1})
	}
	return fns
}

// jsBodyBrace is the position of the brace that opens the body of the
// function whose head starts at from: the first code brace after the first
// parenthesis and its match (or after "=>" for a bare arrow parameter);
// -1 when a ";" comes first.
func jsBodyBrace(src string, from int, match map[int]int) int {
	code := jsCode(src)
	depth := 0
	for i := from; i < len(src); i++ {
		if !code[i] {
			continue
		}
		switch src[i] {
		case '(':
			depth++
		case ')':
			depth--
		case '{':
			if depth == 0 {
				return i
			}
			if c, ok := match[i]; ok {
				i = c
			}
		case ';':
			if depth == 0 {
				return -1
			}
		}
	}
	return -1
}

// jsCodeCache keeps jsCode's answer for the last source scanned.
var jsCodeCache struct {
	src  string
	code []bool
}

// jsCode marks each byte of src that is code: not in a comment, a string
// or the text of a template literal.
func jsCode(src string) []bool {
	if jsCodeCache.code != nil && jsCodeCache.src == src {
		return jsCodeCache.code
	}
	code := make([]bool, len(src))
	// stack of contexts: 'c' code (with its brace depth), '`' template.
	type ctx struct {
		kind  byte
		depth int
	}
	stack := []ctx{{'c', 0}}
	for i := 0; i < len(src); i++ {
		top := &stack[len(stack)-1]
		ch := src[i]
		if top.kind == '`' {
			switch {
			case ch == '\\':
				i++
			case ch == '`':
				stack = stack[:len(stack)-1]
			case ch == '$' && i+1 < len(src) && src[i+1] == '{':
				i++
				stack = append(stack, ctx{'c', 0})
			}
			continue
		}
		switch {
		case ch == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case ch == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				i = len(src)
			} else {
				i += end + 3
			}
		case ch == '"' || ch == '\'':
			for i++; i < len(src) && src[i] != ch && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case ch == '`':
			stack = append(stack, ctx{'`', 0})
		case ch == '{':
			code[i] = true
			top.depth++
		case ch == '}':
			if top.depth == 0 && len(stack) > 1 {
				stack = stack[:len(stack)-1] // the end of a template's ${...}
				continue
			}
			code[i] = true
			top.depth--
		default:
			code[i] = true
		}
	}
	jsCodeCache.src, jsCodeCache.code = src, code
	return code
}

// jsBraces matches the code braces of src: the position of each "{" to
// that of its "}".
func jsBraces(src string) map[int]int {
	code := jsCode(src)
	match := map[int]int{}
	var open []int
	for i := 0; i < len(src); i++ {
		if !code[i] {
			continue
		}
		switch src[i] {
		case '{':
			open = append(open, i)
		case '}':
			if len(open) > 0 {
				match[open[len(open)-1]] = i
				open = open[:len(open)-1]
			}
		}
	}
	return match
}

// moduleRoot is the module's root directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestJSFunctionsMeasures: the scan finds each kind of function and counts
// its lines, braces in strings, comments, templates and default values
// included, and a 121-line function is one over the limit.
func TestJSFunctionsMeasures(t *testing.T) {
	body := func(n int) string { // n lines of body that hold braces in text
		var b strings.Builder
		for i := 0; i < n; i++ {
			switch i % 4 {
			case 0:
				b.WriteString("  const s = \"}}\"; // }\n")
			case 1:
				b.WriteString("  const t = `${a ? `}` : \"{\"} }`;\n")
			case 2:
				b.WriteString("  /* { */ if (x) { y(); }\n")
			default:
				b.WriteString("  h('}');\n")
			}
		}
		return b.String()
	}
	src := "export async function big(a = {}) {\n" + body(119) + "}\n" + // 121 lines
		"function edge() {\n" + body(118) + "}\n" + // 120 lines
		"const arrow = async (x) => {\n" + body(3) + "};\n" + // 5 lines
		"const o = {\n  method(a, b) {\n" + body(2) + "  },\n};\n" + // method: 4 lines
		"const inline = (x) => x + 1;\n" // no block body: not counted
	got := map[string]int{}
	for _, f := range jsFunctions(src) {
		got[f.name] = f.lines
	}
	want := map[string]int{"big": 121, "edge": 120, "arrow": 5, "method": 4}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d lines, want %d (all: %v)", name, got[name], n, got)
		}
	}
	if _, ok := got["inline"]; ok || len(got) != len(want) {
		t.Errorf("found %v, want only %v", got, want)
	}
	if got["big"] <= jsMaxFuncLines || got["edge"] > jsMaxFuncLines {
		t.Errorf("the limit %d does not part big (%d) from edge (%d)", jsMaxFuncLines, got["big"], got["edge"])
	}
}
