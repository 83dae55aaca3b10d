package wire

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEndpointSettingTags: every endpoint setting carries what the layers
// that derive from it need — its member, column, flag, bound, docs and
// console words — so one added without them fails here by name rather
// than as a broken statement or an unbounded field elsewhere.
func TestEndpointSettingTags(t *testing.T) {
	for _, p := range settingProblems {
		t.Errorf("endpoint setting %s", p)
	}
	seen := map[string]string{}
	for _, f := range SettingFields() {
		for _, k := range []string{"json " + f.JSON, "db " + f.Column, "flag " + f.Flag} {
			if prev, dup := seen[k]; dup {
				t.Errorf("settings %s and %s share the %s", prev, f.Name, k)
			}
			seen[k] = f.Name
		}
	}
	if !slices.ContainsFunc(SettingFields(), func(f SettingField) bool {
		return f.Name == "KeyOrdered" && f.Kind == SettingBool && f.Group == "KeyLimits"
	}) {
		t.Error("KeyOrdered is not read as a flag of the KeyLimits group")
	}
}

// TestUpdateRequiresItsSettings: the OpenAPI document's required members
// of an update (the requires tag on ExpectedVersion) are the preset and
// exactly the settings tagged update:"required", which the decoder
// enforces.
func TestUpdateRequiresItsSettings(t *testing.T) {
	f, _ := reflect.TypeFor[EndpointPolicyUpdate]().FieldByName("ExpectedVersion")
	want := []string{"preset"}
	for _, s := range SettingFields() {
		if s.UpdateRequired {
			want = append(want, s.JSON)
		}
	}
	if got := strings.Split(f.Tag.Get("requires"), ","); !slices.Equal(got, want) {
		t.Errorf("EndpointPolicyUpdate.ExpectedVersion requires %q, want %q (the preset and the settings tagged update:\"required\")", got, want)
	}
}
