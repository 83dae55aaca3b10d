package wire

import (
	"slices"
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
