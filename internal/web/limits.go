package web

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/classify"
	"github.com/getratchet/ratchet/internal/simulate"
	"github.com/getratchet/ratchet/wire"
)

// LimitsJS renders assets/limits.js: the limits, presets and enums the pages
// share with the server, from the Go constants (packages backoff, wire and
// the pure internal/simulate) so they are written once. scripts/generate
// writes it (through internal/generate), and TestLimitsJSIsCurrent keeps the
// checked-in file equal to this.
func LimitsJS() []byte {
	limits := map[string]wire.Range{}
	for _, name := range []string{"maxAttempts", "initialDelayMs", "multiplier", "maxDelayMs", "jitterPercent",
		"timeoutMs", "maxConcurrent", "rateLimitPerMinute", "circuitFailureThreshold", "circuitOpenMs"} {
		r, _ := wire.Bound(name)
		limits[name] = r
	}
	// Every endpoint setting's bound, so the editor's fields built from
	// ENDPOINT_SETTINGS find theirs.
	for _, f := range wire.SettingFields() {
		if f.Bound != "" {
			limits[f.Bound] = f.Range
		}
	}
	presets := map[backoff.Preset]backoff.Params{}
	for _, p := range backoff.Presets {
		if params, ok := backoff.PresetParams(p); ok {
			presets[p] = params
		}
	}
	var b bytes.Buffer
	b.WriteString("// Generated from the Go constants of packages backoff and wire by\n// internal/web.LimitsJS; do not edit. Regenerate with\n//   scripts/generate\n\n")
	b.WriteString("const freeze = (v) => {\n  if (v && typeof v === \"object\") {\n    Object.values(v).forEach(freeze);\n    Object.freeze(v);\n  }\n  return v;\n};\n\n")
	def := func(name string, v any) {
		j, err := json.Marshal(v)
		if err != nil {
			panic(err) // only constant maps and lists are rendered
		}
		fmt.Fprintf(&b, "export const %s = freeze(%s);\n", name, j)
	}
	limitsJSON := map[string]map[string]float64{}
	for k, r := range limits {
		limitsJSON[k] = map[string]float64{"min": r.Min, "max": r.Max}
	}
	def("LIMITS", limitsJSON)
	def("ENDPOINT_SETTINGS", endpointSettings())
	def("PRESETS", presets)
	def("PRESET_NAMES", backoff.Presets)
	// The enums of package wire, and the subsets of the job states the
	// pages act on, so no page types a list of them again.
	def("JOB_STATES", wire.JobStates())
	def("FINISHED_STATES", wire.JobStatesWhere(wire.JobState.Finished))
	def("REPLAYABLE_STATES", wire.JobStatesWhere(wire.JobState.Replayable))
	def("CANCELLABLE_STATES", wire.JobStatesWhere(wire.JobState.Cancellable))
	def("CLAIMABLE_STATES", wire.JobStatesWhere(wire.JobState.Claimable))
	// The states a list sorted by finish time may select (wire.JobSort.ByFinish).
	def("UNSUCCESSFUL_STATES", wire.JobStatesWhere(wire.JobState.Unsuccessful))
	def("JOB_SORTS", wire.JobSorts())
	def("ATTEMPT_OUTCOMES", wire.AttemptOutcomes())
	def("GATES", wire.Gates())
	def("CIRCUIT_STATES", wire.CircuitStates())
	def("RUN_STATES", wire.RunStates())
	def("SCOPES", wire.Scopes())
	def("PLANS", wire.Plans())
	def("SCHEDULE_OVERLAPS", wire.ScheduleOverlaps())
	def("SCHEDULE_CATCH_UPS", wire.ScheduleCatchUps())
	def("TICK_OUTCOMES", wire.TickOutcomes())
	def("ENDPOINT_EVENT_KINDS", wire.EndpointEventKinds())
	// The failure classes History counts by (classify.ClassOf).
	def("FAILURE_CLASSES", classify.Classes())
	def("ALERT_SINK_KINDS", wire.AlertSinkKinds())
	def("ALERT_KINDS", wire.AlertKinds())
	def("ALERT_DELIVERY_STATES", wire.AlertDeliveryStates())
	def("CUSTOM_PLANS", wire.Where(wire.Plans(), wire.Plan.AllowsCustom))
	def("JITTER_MODES", backoff.JitterModes)
	def("FIRST_WAITS", []backoff.FirstWait{backoff.FirstWaitBase, backoff.FirstWaitMultiplied})
	fmt.Fprintf(&b, "export const MAX_CALC_ATTEMPTS = %d;\n", backoff.MaxCalcAttempts)
	fmt.Fprintf(&b, "export const SAFETY_LIMIT_MS = %d;\n", backoff.SafetyLimitMs)
	// What one simulator sweep may ask for (simulate.Config.Validate), so
	// the page's help states the server's real limits.
	def("SIM_LIMITS", map[string]int{"clients": simulate.MaxClients, "points": simulate.MaxPoints, "runs": simulate.MaxRuns, "clientRuns": simulate.MaxClientRuns})
	// The dashboard's views and their paths (web.go, DashboardRoutes).
	def("DASHBOARD_ROUTES", DashboardRoutes)
	// How many jobs a text search counts within (the jobs list says so).
	fmt.Fprintf(&b, "export const SEARCH_WINDOW = %d;\n", wire.SearchWindow)
	return b.Bytes()
}

// endpointSettings describes wire.EndpointSettings for the endpoint page's
// policy editor, which builds its settings fields from this list: a new
// setting gets its field without an edit to dashboard.js. kind is "int",
// "limit" (empty for none), "bool" or "text" (with what it allows and its
// default, checked by the server); group "KeyLimits" puts it among the
// limits per flow key; unit is what the server's range message adds.
func endpointSettings() []map[string]any {
	var out []map[string]any
	for _, f := range wire.SettingFields() {
		m := map[string]any{"key": f.JSON, "kind": f.Kind, "label": f.Label, "help": f.Hint, "group": f.Group}
		if f.Kind != wire.SettingBool {
			unit := ""
			if f.Unit != "" {
				unit = " " + f.Unit
			}
			m["bound"], m["units"], m["unit"] = f.Bound, f.Units, unit
		}
		if f.Kind == wire.SettingText {
			_, allowed := f.CheckText("")
			m["allowed"], m["default"] = allowed, f.Default
		}
		out = append(out, m)
	}
	return out
}
