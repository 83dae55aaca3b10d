package engine

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// TestEveryGateHasARule walks "add a gate": every gate of wire.Gates but
// the due time and none (which no rule decides) has exactly one rule in
// endpointRules or keyRules, declared in a file of its own named after
// the gate (gate_<name>.go), and no rule answers for a gate wire does not
// list. A gate constant without a rule is never decided, explained or
// counted.
func TestEveryGateHasARule(t *testing.T) {
	rules := map[wire.Gate][]string{}
	for _, r := range endpointRules {
		rules[r.Gate()] = append(rules[r.Gate()], typeName(r))
	}
	for _, r := range keyRules {
		rules[r.Gate()] = append(rules[r.Gate()], typeName(r))
	}
	listed := map[wire.Gate]bool{}
	for _, g := range wire.Gates() {
		listed[g] = true
		if g == wire.GateDueTime || g == wire.GateNone {
			if len(rules[g]) != 0 {
				t.Errorf("gate %s is decided by the job's due time or by nothing, yet rules %v answer for it", g, rules[g])
			}
			continue
		}
		if len(rules[g]) != 1 {
			t.Errorf("gate %s has rules %v, want exactly one in endpointRules or keyRules (gate.go)", g, rules[g])
			continue
		}
		file := "gate_" + string(g) + ".go"
		src, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("gate %s: its rule %s belongs in a file of its own, %s: %v", g, rules[g][0], file, err)
			continue
		}
		if !regexp.MustCompile(`(?m)^type ` + rules[g][0] + ` struct`).Match(src) {
			t.Errorf("gate %s: %s does not declare its rule %s", g, file, rules[g][0])
		}
	}
	for g, rs := range rules {
		if !listed[g] {
			t.Errorf("rules %v answer for gate %q, which wire.Gates does not list", rs, g)
		}
	}
}

// TestKeyedFollowsTheKeyRules: an endpoint is keyed, and so claimed key
// by key and never optimistically, exactly when one of its key rules is
// active (or fairKeys asks for turns).
func TestKeyedFollowsTheKeyRules(t *testing.T) {
	one := int64(1)
	cases := map[string]*store.Endpoint{
		"none":             {},
		"keyOrdered":       {EndpointSettings: wire.EndpointSettings{KeyLimits: wire.KeyLimits{KeyOrdered: true}}},
		"keyMaxConcurrent": {EndpointSettings: wire.EndpointSettings{KeyLimits: wire.KeyLimits{KeyMaxConcurrent: &one}}},
		"keyRate":          {EndpointSettings: wire.EndpointSettings{KeyLimits: wire.KeyLimits{KeyRateLimitPerMinute: &one}}},
		"fairKeys":         {EndpointSettings: wire.EndpointSettings{KeyLimits: wire.KeyLimits{FairKeys: true}}},
		"keyDailyBudget":   {EndpointSettings: wire.EndpointSettings{KeyLimits: wire.KeyLimits{KeyDailyCallBudget: &one}}},
		"keyMonthlyBudget": {EndpointSettings: wire.EndpointSettings{KeyLimits: wire.KeyLimits{KeyMonthlyCallBudget: &one}}},
	}
	for name, ep := range cases {
		ep.CircuitState, ep.MaxConcurrent = wire.CircuitClosed, 10
		active := ep.FairKeys
		for _, r := range keyRules {
			active = active || r.active(ep)
		}
		if keyed(ep) != active || (name == "none") == keyed(ep) {
			t.Errorf("%s: keyed %v, key rules active %v", name, keyed(ep), active)
		}
		if open, _ := fastOpen(ep, 10, 0); open == keyed(ep) {
			t.Errorf("%s: the optimistic path is open %v for a keyed %v endpoint", name, open, keyed(ep))
		}
	}
}

func typeName(v any) string { return strings.TrimPrefix(fmt.Sprintf("%T", v), "engine.") }
