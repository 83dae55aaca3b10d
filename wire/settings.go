package wire

import (
	"fmt"
	"reflect"
	"strings"
)

// SettingKind is the shape of an endpoint setting's value.
type SettingKind string

// The kinds of endpoint settings: an integer in its bound's range, a
// nullable integer (null for no limit), a flag, and text checked by its
// text tag (wire/window.go's textChecks: a time zone, a quiet window),
// whose bound is its length.
const (
	SettingInt   SettingKind = "int"
	SettingLimit SettingKind = "limit"
	SettingBool  SettingKind = "bool"
	SettingText  SettingKind = "text"
)

// SettingField describes one member of EndpointSettings from its tags.
// Every layer that handles the settings one by one (the API's decoder, the
// store's columns, the CLI's flags, the console's editor) ranges over
// SettingFields instead of naming them, so a setting is written once.
type SettingField struct {
	Name           string      // the Go field
	JSON           string      // the API member
	Kind           SettingKind // int, limit (nullable), bool or text
	Bound          string      // the wire/limits.go range of an integer, or a text's length ("" for a bool)
	Text           string      // what a text setting holds: "zone" or "window" (textChecks)
	Default        string      // a text setting's value when a create leaves it out
	Range          Range       // that range
	Unit           string      // what an integer counts, for messages ("milliseconds" or "")
	Column         string      // the endpoints table's column
	Flag           string      // the CLI flag of endpoints create/update
	Help           string      // the flag's usage, without the range
	Doc            string      // what it does
	Label          string      // the console editor's label
	Units          string      // what the number counts, beside the console's input ("ms", "jobs"; "" for a bool)
	Hint           string      // the console's help under the field
	Group          string      // the embedded struct it comes from ("KeyLimits"), "" for EndpointSettings' own
	UpdateRequired bool        // an update must carry it; otherwise one left out stays
	index          []int
}

// Value is the field's value in s, addressable (a pointer's address for
// a scan, the field itself for an assignment).
func (f SettingField) Value(s *EndpointSettings) reflect.Value {
	return reflect.ValueOf(s).Elem().FieldByIndex(f.index)
}

// settingProblems are the tags the settings lack; TestEndpointSettingTags
// names them (a setting without its column or bound would fail obscurely
// far from here).
var settingProblems []string

var settingFields = func() []SettingField {
	var out []SettingField
	var walk func(t reflect.Type, index []int, group string)
	walk = func(t reflect.Type, index []int, group string) {
		for i := range t.NumField() {
			sf := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			if sf.Anonymous {
				walk(sf.Type, idx, sf.Name)
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
			f := SettingField{Name: sf.Name, JSON: name, Bound: sf.Tag.Get("bound"), Column: sf.Tag.Get("db"), Flag: sf.Tag.Get("flag"), Help: sf.Tag.Get("help"),
				Doc: sf.Tag.Get("doc"), Unit: sf.Tag.Get("unit"),
				Label: sf.Tag.Get("label"), Units: sf.Tag.Get("units"), Hint: sf.Tag.Get("hint"), Group: group, Text: sf.Tag.Get("text"), Default: sf.Tag.Get("default"), UpdateRequired: sf.Tag.Get("update") == "required", index: idx}
			switch sf.Type.Kind() {
			case reflect.Int64:
				f.Kind = SettingInt
			case reflect.Pointer:
				f.Kind = SettingLimit
			case reflect.Bool:
				f.Kind = SettingBool
			case reflect.String:
				f.Kind = SettingText
				if _, ok := textChecks[f.Text]; !ok {
					settingProblems = append(settingProblems, fmt.Sprintf("%s names text kind %q, which wire/window.go's textChecks lack", sf.Name, f.Text))
				}
			default:
				settingProblems = append(settingProblems, sf.Name+" has an unsupported type "+sf.Type.String()+" (int64, *int64, bool or string)")
			}
			if f.Kind != SettingBool {
				r, ok := Bound(f.Bound)
				if !ok {
					settingProblems = append(settingProblems, fmt.Sprintf("%s names bound %q, which wire/limits.go's bounds lack", sf.Name, f.Bound))
				}
				f.Range = r
			}
			for i, v := range []string{f.JSON, f.Column, f.Flag, f.Help, f.Doc, f.Label, f.Hint} {
				if v == "" {
					settingProblems = append(settingProblems, sf.Name+" has no "+[]string{"json", "db", "flag", "help", "doc", "label", "hint"}[i]+" tag")
				}
			}
			out = append(out, f)
		}
	}
	walk(reflect.TypeFor[EndpointSettings](), nil, "")
	return out
}()

// SettingFields are the members of EndpointSettings in declaration order.
func SettingFields() []SettingField { return settingFields }
