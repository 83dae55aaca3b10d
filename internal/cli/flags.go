package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/field"
)

// flagSet wraps flag.FlagSet so that every value is read as text and
// converted by us: errors then name the flag, the value and what is allowed,
// and all of them are reported at once.
type flagSet struct {
	fs   *flag.FlagSet
	set  map[string]bool
	errs field.Errors
}

func newFlagSet(name, usage string, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flagSet{fs: fs}
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: ratchet %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return f
}

// String registers a flag read as text, to be converted by the methods
// below so that errors name the flag.
func (f *flagSet) String(name, def, usage string) *string { return f.fs.String(name, def, usage) }

// Bool registers a switch; it defaults to false.
func (f *flagSet) Bool(name string, usage string) *bool { return f.fs.Bool(name, false, usage) }

// StringVar registers a flag read as text into p, for flags gathered in
// a struct and converted together.
func (f *flagSet) StringVar(p *string, name, def, usage string) { f.fs.StringVar(p, name, def, usage) }

// BoolVar registers a switch into p; it defaults to false.
func (f *flagSet) BoolVar(p *bool, name string, usage string) { f.fs.BoolVar(p, name, false, usage) }

// parse parses args. --help prints usage and returns errHelp.
func (f *flagSet) parse(args []string) error {
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return &UsageError{Err: err}
	}
	if f.fs.NArg() > 0 {
		return usagef("unexpected argument %q; every input is a --flag", f.fs.Arg(0))
	}
	f.set = map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return nil
}

var errHelp = errors.New("help requested")

func (f *flagSet) isSet(name string) bool { return f.set[name] }

func (f *flagSet) fail(name, value, allowed string) {
	f.errs = append(f.errs, &field.Error{Field: "--" + name, Value: quoteValue(value), Allowed: allowed})
}

func quoteValue(v string) string {
	if v == "" {
		return `""`
	}
	return strconv.Quote(v)
}

// number parses a finite decimal number.
func (f *flagSet) number(name, text, allowed string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		f.fail(name, text, allowed)
		return math.NaN()
	}
	return v
}

// integer parses a whole number in [lo, hi].
func (f *flagSet) integer(name, text string, lo, hi int64, allowed string) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
	if err != nil || v < lo || v > hi {
		f.fail(name, text, allowed)
		return lo
	}
	return v
}

// pageFlags registers the --cursor and --limit of a paged list of what
// ("jobs", "runs"). limit reads --limit once the flags are parsed: 0 when
// it was not given (the server's default, 100), else 1–500.
func pageFlags(f *flagSet, what string) (cursor *string, limit func() int) {
	cursor = f.String("cursor", "", "the next cursor a previous page printed")
	text := f.String("limit", "", what+" per page, 1–500 (server default 100)")
	return cursor, func() int {
		if *text == "" {
			return 0
		}
		return int(f.integer("limit", *text, 1, 500, "must be an integer from 1 through 500"))
	}
}

// done returns the collected errors as a usage error.
func (f *flagSet) done() error {
	if len(f.errs) == 0 {
		return nil
	}
	return &UsageError{Err: f.errs}
}

// renameFields maps the JSON field names of a validation error to flag names.
func renameFields(err error, names map[string]string) error {
	var es field.Errors
	if !errors.As(err, &es) {
		return err
	}
	out := make(field.Errors, len(es))
	for i, e := range es {
		c := *e
		if n, ok := names[c.Field]; ok {
			c.Field = n
		}
		out[i] = &c
	}
	return &UsageError{Err: out}
}

// limit sets *dst from flag name when given: nil for "none", else an
// integer from 1 through hi.
func (f *flagSet) limit(name, text string, hi int64, dst **int64) {
	if !f.isSet(name) {
		return
	}
	if strings.EqualFold(text, "none") {
		*dst = nil
		return
	}
	v := f.integer(name, text, 1, hi, fmt.Sprintf("must be an integer from 1 through %d, or none", hi))
	*dst = &v
}

// boolean sets *dst from flag name when given: true or false.
func (f *flagSet) boolean(name, text string, dst *bool) {
	if !f.isSet(name) {
		return
	}
	switch strings.ToLower(text) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		f.fail(name, text, "must be true or false")
	}
}
