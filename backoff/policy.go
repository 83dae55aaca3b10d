package backoff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/getratchet/ratchet/field"
)

// Preset names a built-in policy, or CUSTOM for one that spells out every field.
type Preset string

// The presets of the retry policy documentation.
const (
	Standard   Preset = "STANDARD"
	Aggressive Preset = "AGGRESSIVE"
	Relaxed    Preset = "RELAXED"
	Custom     Preset = "CUSTOM"
)

// Presets lists the preset names in the order the documentation shows them.
var Presets = []Preset{Standard, Aggressive, Relaxed, Custom}

// Validation limits of a custom policy.
const (
	MinAttempts       = 1
	MaxAttempts       = 10
	MinInitialDelayMs = 1_000
	MaxInitialDelayMs = 1_800_000
	MinMultiplier     = 1.0
	MaxMultiplier     = 4.0
	MaxMaxDelayMs     = 86_400_000
	MinJitterPercent  = 0.0
	MaxJitterPercent  = 50.0

	// SafetyLimitMs is the 24-hour limit applied to every selected delay, after
	// the retry-after hint.
	SafetyLimitMs = 86_400_000
)

// Params are the five numbers a policy resolves to.
type Params struct {
	MaxAttempts    int     `json:"maxAttempts"`    // total attempts, including the first
	InitialDelayMs int64   `json:"initialDelayMs"` // base delay after failed attempt 1
	Multiplier     float64 `json:"multiplier"`     // growth per failed attempt
	MaxDelayMs     int64   `json:"maxDelayMs"`     // cap, applied before jitter
	JitterPercent  float64 `json:"jitterPercent"`  // ± percentage around the base
}

var presetParams = map[Preset]Params{
	Standard:   {MaxAttempts: 5, InitialDelayMs: 30_000, Multiplier: 2, MaxDelayMs: 900_000, JitterPercent: 20},
	Aggressive: {MaxAttempts: 8, InitialDelayMs: 5_000, Multiplier: 2, MaxDelayMs: 300_000, JitterPercent: 20},
	Relaxed:    {MaxAttempts: 3, InitialDelayMs: 120_000, Multiplier: 2, MaxDelayMs: 1_800_000, JitterPercent: 20},
}

// PresetParams returns the numbers of a built-in preset. It reports false for
// CUSTOM and unknown names.
func PresetParams(p Preset) (Params, bool) {
	v, ok := presetParams[p]
	return v, ok
}

// Policy is a retry policy document: a built-in preset, or CUSTOM with all five
// fields. The zero value is not valid; build one with ParsePolicy, NewCustom or
// PresetPolicy, or call Validate.
type Policy struct {
	Preset Preset
	// Custom holds the fields of a CUSTOM policy. It is ignored (and must be
	// absent in JSON) for the built-in presets.
	Custom Params
}

// PresetPolicy returns the policy document of a built-in preset.
func PresetPolicy(p Preset) Policy { return Policy{Preset: p} }

// NewCustom validates params and returns them as a CUSTOM policy.
func NewCustom(params Params) (Policy, error) {
	p := Policy{Preset: Custom, Custom: params}
	return p, p.Validate()
}

// Params resolves the policy to its numbers. The policy must be valid.
func (p Policy) Params() Params {
	if p.Preset == Custom {
		return p.Custom
	}
	return presetParams[p.Preset]
}

// Validate checks a policy built in Go code against the documented limits.
func (p Policy) Validate() error {
	var errs field.Errors
	switch p.Preset {
	case Standard, Aggressive, Relaxed:
	case Custom:
		validateParams(&errs, p.Custom)
	default:
		errs.Add("preset", strconv.Quote(string(p.Preset)), allowedPresets)
	}
	return errs.Err()
}

const allowedPresets = "must be one of STANDARD, AGGRESSIVE, RELAXED, CUSTOM"

func validateParams(errs *field.Errors, c Params) {
	if c.MaxAttempts < MinAttempts || c.MaxAttempts > MaxAttempts {
		errs.Add("maxAttempts", strconv.Itoa(c.MaxAttempts), "must be an integer from 1 through 10")
	}
	if c.InitialDelayMs < MinInitialDelayMs || c.InitialDelayMs > MaxInitialDelayMs {
		errs.Add("initialDelayMs", strconv.FormatInt(c.InitialDelayMs, 10), "must be an integer from 1000 through 1800000 milliseconds")
	}
	if !(c.Multiplier >= MinMultiplier && c.Multiplier <= MaxMultiplier) {
		errs.Add("multiplier", formatNumber(c.Multiplier), "must be a number from 1 through 4")
	}
	lo := c.InitialDelayMs
	if lo < MinInitialDelayMs || lo > MaxInitialDelayMs {
		lo = MinInitialDelayMs // the initial delay is already reported
	}
	if c.MaxDelayMs < lo || c.MaxDelayMs > MaxMaxDelayMs {
		errs.Add("maxDelayMs", strconv.FormatInt(c.MaxDelayMs, 10),
			fmt.Sprintf("must be an integer from the initial delay (%d) through 86400000 milliseconds", lo))
	}
	if !(c.JitterPercent >= MinJitterPercent && c.JitterPercent <= MaxJitterPercent) {
		errs.Add("jitterPercent", formatNumber(c.JitterPercent), "must be a number from 0 through 50")
	}
}

// MarshalJSON writes the document form: only "preset" for a built-in preset,
// every field for CUSTOM.
func (p Policy) MarshalJSON() ([]byte, error) {
	if p.Preset != Custom {
		return json.Marshal(struct {
			Preset Preset `json:"preset"`
		}{p.Preset})
	}
	return json.Marshal(struct {
		Preset Preset `json:"preset"`
		Params
	}{p.Preset, p.Custom})
}

// UnmarshalJSON parses and validates a policy document; see ParsePolicy.
func (p *Policy) UnmarshalJSON(data []byte) error {
	v, err := ParsePolicy(data)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

var policyFields = []string{"preset", "maxAttempts", "initialDelayMs", "multiplier", "maxDelayMs", "jitterPercent"}

// ParsePolicy reads and validates a policy JSON document such as
//
//	{"preset": "CUSTOM", "maxAttempts": 6, "initialDelayMs": 10000,
//	 "multiplier": 2, "maxDelayMs": 600000, "jitterPercent": 20}
//
// Unknown and repeated fields are rejected, CUSTOM requires every field and a
// built-in preset forbids them. All problems are returned together as Errors.
func ParsePolicy(data []byte) (Policy, error) {
	fields, err := readObject(data, "policy")
	if fields == nil {
		return Policy{}, err
	}
	p, perr := PolicyFromFields(fields, "")
	if err != nil { // repeated fields: report them with everything else
		var es field.Errors
		es.Merge(err)
		es.Merge(perr)
		return Policy{}, es
	}
	return p, perr
}

// PolicyFromFields validates a policy whose JSON object members were already
// split out (by ParsePolicy, or by a larger document that embeds the policy
// fields). prefix is put before every field name in errors, e.g. "retryPolicy.".
func PolicyFromFields(fields map[string]json.RawMessage, prefix string) (Policy, error) {
	var errs field.Errors
	known := map[string]bool{}
	for _, f := range policyFields {
		known[f] = true
	}
	for _, k := range sortedKeys(fields) {
		if !known[k] {
			errs.Add(prefix+displayKey(k), field.Unknown, "allowed fields are "+strings.Join(policyFields, ", "))
		}
	}
	p := Policy{Preset: presetField(&errs, fields, prefix)}
	switch p.Preset {
	case Custom:
		p.Custom = customFields(&errs, fields, prefix)
	case Standard, Aggressive, Relaxed:
		for _, k := range policyFields[1:] {
			if v, ok := fields[k]; ok {
				errs.Add(prefix+k, ShowJSON(v), fmt.Sprintf("preset %s forbids custom fields; use \"preset\": \"CUSTOM\" to set %s", p.Preset, k))
			}
		}
	}
	if len(errs) > 0 {
		return Policy{}, errs
	}
	return p, nil
}

// presetField reads the required preset member: a built-in preset or
// CUSTOM. A string that is neither is returned as it is (with an error),
// so that no preset's rules apply to the other fields.
func presetField(errs *field.Errors, fields map[string]json.RawMessage, prefix string) Preset {
	raw, ok := fields["preset"]
	if !ok {
		errs.Add(prefix+"preset", field.Missing, "required; "+allowedPresets)
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		errs.Add(prefix+"preset", ShowJSON(raw), allowedPresets)
		return ""
	}
	if _, builtin := presetParams[Preset(s)]; !builtin && Preset(s) != Custom {
		errs.Add(prefix+"preset", strconv.Quote(s), allowedPresets)
	}
	return Preset(s)
}

// customFields reads the parameters of a CUSTOM policy; every one is
// required. The bound of maxDelayMs is the initial delay when that one
// was read.
func customFields(errs *field.Errors, fields map[string]json.RawMessage, prefix string) Params {
	var c Params
	c.MaxAttempts = int(intField(errs, fields, prefix, "maxAttempts", MinAttempts, MaxAttempts, "must be an integer from 1 through 10"))
	c.InitialDelayMs = intField(errs, fields, prefix, "initialDelayMs", MinInitialDelayMs, MaxInitialDelayMs, "must be an integer from 1000 through 1800000 milliseconds")
	c.Multiplier = numField(errs, fields, prefix, "multiplier", MinMultiplier, MaxMultiplier, "must be a number from 1 through 4")
	lo := c.InitialDelayMs
	if lo == 0 {
		lo = MinInitialDelayMs
	}
	c.MaxDelayMs = intField(errs, fields, prefix, "maxDelayMs", lo, MaxMaxDelayMs,
		fmt.Sprintf("must be an integer from the initial delay (%d) through 86400000 milliseconds", lo))
	c.JitterPercent = numField(errs, fields, prefix, "jitterPercent", MinJitterPercent, MaxJitterPercent, "must be a number from 0 through 50")
	return c
}

// intField reads an integer member in [lo, hi]; on any problem it records an
// error and returns 0.
func intField(errs *field.Errors, fields map[string]json.RawMessage, prefix, name string, lo, hi int64, allowed string) int64 {
	raw, ok := fields[name]
	if !ok {
		errs.Add(prefix+name, field.Missing, "CUSTOM requires every field; "+allowed)
		return 0
	}
	f, ok := JSONNumber(raw)
	if !ok || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		errs.Add(prefix+name, ShowJSON(raw), allowed)
		return 0
	}
	return int64(f)
}

func numField(errs *field.Errors, fields map[string]json.RawMessage, prefix, name string, lo, hi float64, allowed string) float64 {
	raw, ok := fields[name]
	if !ok {
		errs.Add(prefix+name, field.Missing, "CUSTOM requires every field; "+allowed)
		return 0
	}
	f, ok := JSONNumber(raw)
	if !ok || f < lo || f > hi {
		errs.Add(prefix+name, ShowJSON(raw), allowed)
		return 0
	}
	return f
}

// JSONNumber reads a JSON number literal (not a string, not null), as the
// policy fields are read; documents that embed other numeric fields use it
// so they accept and refuse exactly the same spellings.
func JSONNumber(raw json.RawMessage) (float64, bool) {
	s := strings.TrimSpace(string(raw))
	if s == "" || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// ReadObject splits a JSON object into its members, rejecting anything that is
// not exactly one object and any member given twice. what names the document
// in errors. When the only problems are repeated members it returns the
// members (first occurrence wins) together with the error, so callers can
// report every problem of the document at once.
func ReadObject(data []byte, what string) (map[string]json.RawMessage, error) {
	return readObject(data, what)
}

func readObject(data []byte, what string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, field.Errors{{Field: what, Value: "malformed JSON (" + jsonErr(err) + ")", Allowed: "must be a JSON object"}}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, field.Errors{{Field: what, Value: fmt.Sprintf("%v", tokString(tok)), Allowed: "must be a JSON object"}}
	}
	fields := map[string]json.RawMessage{}
	var errs field.Errors
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, field.Errors{{Field: what, Value: "malformed JSON (" + jsonErr(err) + ")", Allowed: "must be a JSON object"}}
		}
		key := kt.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, field.Errors{{Field: what + "." + strconv.Quote(key), Value: "malformed JSON (" + jsonErr(err) + ")", Allowed: "must be valid JSON"}}
		}
		if _, dup := fields[key]; dup {
			errs.Add(displayKey(key), field.Repeated, "each field may appear once")
			continue
		}
		fields[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, field.Errors{{Field: what, Value: "malformed JSON (" + jsonErr(err) + ")", Allowed: "must be a JSON object"}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, field.Errors{{Field: what, Value: "trailing data after the object", Allowed: "must be exactly one JSON object"}}
	}
	return fields, errs.Err()
}

// displayKey names an object member in an error; only an empty name is quoted
// so the message never has a blank where the field should be.
func displayKey(k string) string {
	if k == "" {
		return `""`
	}
	return k
}

func jsonErr(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

func tokString(t json.Token) string {
	switch v := t.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(v)
	case json.Delim:
		if v == '[' {
			return "an array"
		}
		return string(v)
	default:
		return fmt.Sprint(v)
	}
}

// ShowJSON renders a raw JSON value for FieldError.Value: compacted, and
// shortened when long.
func ShowJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	s := b.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

func sortedKeys(m map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(m))
}

// formatNumber prints a float the way JSON and JavaScript would: shortest form,
// no exponent for ordinary magnitudes.
func formatNumber(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}
