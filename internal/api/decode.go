package api

import (
	"bytes"
	"encoding/json"
	"maps"
	"math"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/webhook"
	"github.com/getratchet/ratchet/wire"
)

// The documents of the rawBody() routes — a tool contract, an endpoint
// policy — are decoded here, at the boundary, member by member: every bad
// member is named with the value given and what is allowed, all in one
// answer, which a strict json.Unmarshal into the wire type could not do.
// The engine takes the typed values these return.

// toolMembers are the members of a tool contract, in the order its errors
// list them.
var toolMembers = []string{"name", "version", "endpoint", "description", "payloadSchema", "timeoutMs", "retryPreset", "retryPolicy", "delivery", "flowKeyFrom"}

// DecodeToolSpec decodes a tool contract document (the body of POST
// /v1/tools). It reports every problem as a field.Errors. The engine's own
// tests decode their fixtures with it, as the API does.
func DecodeToolSpec(data []byte) (engine.ToolSpec, error) {
	fields, err := backoff.ReadObject(data, "tool")
	if fields == nil {
		return engine.ToolSpec{}, err
	}
	var errs field.Errors
	errs.Merge(err)
	unknownMembers(fields, toolMembers, "", &errs)
	var s engine.ToolSpec
	toolText(fields, &s, &errs)
	s.PayloadSchema = toolSchema(fields, &errs)
	s.TimeoutMs = toolTimeout(fields, &errs)
	if raw, ok := fields["delivery"]; ok && !isNull(raw) {
		s.Delivery = decodeDelivery(raw, &errs)
	}
	s.RetryPolicy = toolRetry(fields, s.RetryPreset, &errs)
	if len(errs) > 0 {
		return engine.ToolSpec{}, errs
	}
	return s, nil
}

// toolText reads the string members of a tool contract and checks the
// name, version, endpoint and description.
func toolText(fields map[string]json.RawMessage, s *engine.ToolSpec, errs *field.Errors) {
	str := func(name string, required bool, dst *string) {
		raw, ok := fields[name]
		if !ok {
			if required {
				errs.Add(name, field.Missing, "required string")
			}
			return
		}
		if isNull(raw) && required || json.Unmarshal(raw, dst) != nil {
			errs.Add(name, backoff.ShowJSON(raw), "must be a string")
		}
	}
	str("name", true, &s.Name)
	str("version", true, &s.Version)
	str("endpoint", true, &s.Endpoint)
	str("description", false, &s.Description)
	str("retryPreset", false, &s.RetryPreset)
	str("flowKeyFrom", false, &s.FlowKeyFrom)
	// A name, version or endpoint given as "" (or null, above) is refused
	// like any other bad value: an empty contract name cannot be claimed.
	if _, ok := fields["name"]; ok && !engine.ValidName(s.Name) {
		errs.Add("name", strconv.QuoteToASCII(s.Name), engine.NameAllowed)
	}
	if _, ok := fields["version"]; ok && !engine.ValidVersion(s.Version) {
		errs.Add("version", strconv.QuoteToASCII(s.Version), engine.VersionAllowed)
	}
	if _, ok := fields["endpoint"]; ok && !engine.ValidName(s.Endpoint) {
		errs.Add("endpoint", strconv.QuoteToASCII(s.Endpoint), "must name an existing endpoint of this project ("+strings.TrimPrefix(engine.NameAllowed, "must be ")+")")
	}
	if s.FlowKeyFrom != "" {
		if _, err := engine.ParsePointer(s.FlowKeyFrom); err != nil {
			errs.Add("flowKeyFrom", strconv.QuoteToASCII(s.FlowKeyFrom), engine.FlowKeyFromAllowed+" ("+err.Error()+")")
		}
	}
	// A description is free text: cleaned of control characters and
	// invalid bytes, then checked for length in characters.
	s.Description = engine.CleanText(s.Description)
	if n := utf8.RuneCountInString(s.Description); n > wire.MaxDescriptionLen {
		errs.Add("description", "a text of "+strconv.Itoa(n)+" characters", "must be at most "+strconv.Itoa(wire.MaxDescriptionLen)+" characters")
	}
}

// toolSchema reads the payload schema; nil for none.
func toolSchema(fields map[string]json.RawMessage, errs *field.Errors) json.RawMessage {
	raw, ok := fields["payloadSchema"]
	if !ok || isNull(raw) {
		return nil
	}
	if len(raw) > engine.MaxSchemaBytes {
		errs.Add("payloadSchema", "a schema of "+strconv.Itoa(len(raw))+" bytes", "must be at most "+strconv.Itoa(engine.MaxSchemaBytes)+" bytes")
	} else if err := engine.CheckSchema(raw); err != nil {
		errs.Add("payloadSchema", backoff.ShowJSON(raw), "must be a valid JSON Schema ("+err.Error()+")")
	}
	return raw
}

// toolTimeout reads the tool's lease; nil for the endpoint's.
func toolTimeout(fields map[string]json.RawMessage, errs *field.Errors) *int64 {
	raw, ok := fields["timeoutMs"]
	if !ok || isNull(raw) {
		return nil
	}
	v, ok := jsonInt(raw)
	if !ok || v < wire.MinTimeoutMs || v > wire.MaxTimeoutMs {
		errs.Add("timeoutMs", backoff.ShowJSON(raw), "must be null or "+strings.TrimPrefix(rangeText(wire.MinTimeoutMs, wire.MaxTimeoutMs, " milliseconds"), "must be "))
		return nil
	}
	return &v
}

// toolRetry checks the retry preset against the retry policy and reads the
// CUSTOM policy; nil for any other preset.
func toolRetry(fields map[string]json.RawMessage, preset string, errs *field.Errors) *backoff.Policy {
	raw, hasPolicy := fields["retryPolicy"]
	if hasPolicy && isNull(raw) {
		hasPolicy = false
	}
	switch backoff.Preset(preset) {
	case "":
		if hasPolicy {
			errs.Add("retryPolicy", backoff.ShowJSON(raw), `needs "retryPreset": "CUSTOM"`)
		}
	case backoff.Standard, backoff.Aggressive, backoff.Relaxed:
		if hasPolicy {
			errs.Add("retryPolicy", backoff.ShowJSON(raw), "built-in presets forbid a custom policy; use \"retryPreset\": \"CUSTOM\"")
		}
	case backoff.Custom:
		if !hasPolicy {
			errs.Add("retryPolicy", field.Missing, "CUSTOM requires a retryPolicy with every field")
			return nil
		}
		return customPolicy(raw, errs)
	default:
		errs.Add("retryPreset", strconv.Quote(preset), "must be one of STANDARD, AGGRESSIVE, RELAXED, CUSTOM, or absent to use the endpoint's policy")
	}
	return nil
}

// customPolicy reads the retryPolicy of a CUSTOM tool; its preset may be
// left out.
func customPolicy(raw json.RawMessage, errs *field.Errors) *backoff.Policy {
	pf, err := backoff.ReadObject(raw, "retryPolicy")
	errs.Merge(err)
	if pf == nil {
		return nil
	}
	if _, ok := pf["preset"]; !ok {
		pf["preset"] = json.RawMessage(`"CUSTOM"`)
	}
	p, err := backoff.PolicyFromFields(pf, "retryPolicy.")
	if err != nil {
		errs.Merge(err)
		return nil
	}
	if p.Preset != backoff.Custom {
		errs.Add("retryPolicy.preset", strconv.Quote(string(p.Preset)), `must be "CUSTOM" to match retryPreset`)
		return nil
	}
	return &p
}

// deliveryMembers are the members of a tool's delivery target.
var deliveryMembers = []string{"method", "url", "headers", "secret", "generateSecret"}

// decodeDelivery reads the "delivery" member of a tool contract.
func decodeDelivery(raw json.RawMessage, errs *field.Errors) *engine.DeliverySpec {
	fields, err := backoff.ReadObject(raw, "delivery")
	errs.Merge(err)
	if fields == nil {
		return nil
	}
	unknownMembers(fields, deliveryMembers, "delivery.", errs)
	d := &engine.DeliverySpec{Method: "POST"}
	if m, ok := fields["method"]; ok && json.Unmarshal(m, &d.Method) != nil || !slices.Contains(engine.DeliveryMethods, d.Method) {
		errs.Add("delivery.method", backoff.ShowJSON(fields["method"]), "must be one of "+strings.Join(engine.DeliveryMethods, ", ")+" (default POST)")
	}
	if u, ok := fields["url"]; !ok {
		errs.Add("delivery.url", field.Missing, "required: the absolute http or https URL to deliver to")
	} else if json.Unmarshal(u, &d.URL) != nil {
		errs.Add("delivery.url", backoff.ShowJSON(u), "must be a string")
	} else if _, err := webhook.ParseTemplate(d.URL); err != nil {
		errs.Add("delivery.url", strconv.QuoteToASCII(d.URL), err.Error())
	}
	if h, ok := fields["headers"]; ok {
		d.Headers = deliveryHeaders(h, errs)
	}
	if g, ok := fields["generateSecret"]; ok && json.Unmarshal(g, &d.GenerateSecret) != nil {
		errs.Add("delivery.generateSecret", backoff.ShowJSON(g), "must be true or false")
	}
	if sr, ok := fields["secret"]; ok {
		if json.Unmarshal(sr, &d.Secret) != nil {
			errs.Add("delivery.secret", "(hidden)", "must be a string")
		} else if _, err := webhook.ParseSecret(d.Secret); err != nil {
			// The value is never echoed: it is a secret even when malformed.
			errs.Add("delivery.secret", "(hidden)", err.Error())
		}
		if d.GenerateSecret {
			errs.Add("delivery.generateSecret", "true", "give either secret or generateSecret, not both")
		}
	}
	return d
}

// deliveryHeaders reads a delivery's static headers, keyed by their
// canonical names.
func deliveryHeaders(raw json.RawMessage, errs *field.Errors) map[string]string {
	var given map[string]string
	if json.Unmarshal(raw, &given) != nil {
		errs.Add("delivery.headers", backoff.ShowJSON(raw), "must be an object of header names to string values")
	}
	if len(given) > engine.MaxDeliveryHeaders {
		errs.Add("delivery.headers", strconv.Itoa(len(given))+" headers", "at most "+strconv.Itoa(engine.MaxDeliveryHeaders))
	}
	canon := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		v := given[k]
		name := "delivery.headers." + k
		c := textproto.CanonicalMIMEHeaderKey(k)
		switch {
		case !validHeaderName(k):
			errs.Add(name, strconv.QuoteToASCII(k), "a header name is letters, digits and !#$%&'*+-.^_`|~")
		case strings.ContainsAny(v, "\r\n\x00") || len(k)+len(v) > engine.MaxDeliveryHeaderBytes:
			errs.Add(name, "a value of "+strconv.Itoa(len(v))+" bytes", "one line without control characters, at most "+strconv.Itoa(engine.MaxDeliveryHeaderBytes)+" bytes")
		case slices.Contains(engine.ReservedDeliveryHeaders, c):
			errs.Add(name, strconv.QuoteToASCII(k), "is set by Ratchet on every delivery; the reserved names are "+strings.Join(engine.ReservedDeliveryHeaders, ", "))
		default:
			if _, dup := canon[c]; dup {
				errs.Add(name, strconv.QuoteToASCII(k), "is given twice in another case")
			}
			canon[c] = v
		}
	}
	return canon
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// policyMembers are the retry-policy members of the flat endpoint policy
// object; endpointSettings the others, read from wire.EndpointSettings so
// a new setting is decoded without an edit here.
var (
	policyMembers    = []string{"preset", "maxAttempts", "initialDelayMs", "multiplier", "maxDelayMs", "jitterPercent"}
	endpointSettings = func() []string {
		var names []string
		for _, f := range wire.SettingFields() {
			names = append(names, f.JSON)
		}
		return names
	}()
)

// DecodeEndpointPolicy reads the flat endpoint policy object of the API:
// the retry policy members with the members of wire.EndpointSettings.
// extra names further members the caller allows (e.g. "name",
// "expectedVersion"). With full, every policy member must be present (an
// update replaces the whole policy); otherwise the engine's defaults fill
// the gaps. current supplies settings an update leaves out. It
// reports every problem as a field.Errors.
func DecodeEndpointPolicy(fields map[string]json.RawMessage, full bool, current *engine.EndpointPolicy, extra ...string) (engine.EndpointPolicy, error) {
	var errs field.Errors
	known := slices.Compact(slices.Sorted(slices.Values(slices.Concat(policyMembers, endpointSettings, extra))))
	unknownMembers(fields, known, "", &errs)
	out := engine.DefaultEndpointPolicy()
	if current != nil {
		// Settings an update may leave out stay as they are; the others
		// it must carry, so these are overwritten or the update fails.
		out.EndpointSettings = current.EndpointSettings
	}
	policy := map[string]json.RawMessage{}
	for _, k := range policyMembers {
		if raw, ok := fields[k]; ok {
			policy[k] = raw
		}
	}
	if len(policy) > 0 || full {
		p, err := backoff.PolicyFromFields(policy, "")
		if err != nil {
			errs.Merge(err)
		} else {
			out.Policy = p
		}
	}
	readSettings(fields, full, &out.EndpointSettings, &errs)
	if len(errs) > 0 {
		return engine.EndpointPolicy{}, errs
	}
	return out, nil
}

// readSettings reads each member of wire.EndpointSettings present in
// fields into s, as its tags say: an integer in its bound's range, a
// nullable limit, a flag, or a text its check accepts. In an update (full) those tagged
// update:"required" must be present; the others left out keep s's value.
func readSettings(fields map[string]json.RawMessage, full bool, s *wire.EndpointSettings, errs *field.Errors) {
	ints := intMembers{fields: fields, full: full, errs: errs}
	for _, f := range wire.SettingFields() {
		v := f.Value(s)
		lo, hi := int64(f.Range.Min), int64(f.Range.Max)
		switch f.Kind {
		case wire.SettingInt:
			unit := ""
			if f.Unit != "" {
				unit = " " + f.Unit
			}
			ints.read(f.JSON, f.UpdateRequired, lo, hi, unit, v.Addr().Interface().(*int64))
		case wire.SettingLimit:
			dst := v.Addr().Interface().(**int64)
			if _, ok := fields[f.JSON]; !ok && full && f.UpdateRequired {
				errs.Add(f.JSON, field.Missing, "an update carries the full policy; give null for no limit or "+strings.TrimPrefix(rangeText(lo, hi, ""), "must be "))
				continue
			}
			optionalLimit(fields, f.JSON, lo, hi, dst, errs)
		case wire.SettingBool:
			optionalBool(fields, f.JSON, v.Addr().Interface().(*bool), errs)
		case wire.SettingText:
			optionalText(fields, f, v.Addr().Interface().(*string), errs)
		}
	}
}

// optionalText sets *dst from the member of text setting f when present:
// a string its check accepts (a time zone, a quiet window).
func optionalText(fields map[string]json.RawMessage, f wire.SettingField, dst *string, errs *field.Errors) {
	raw, ok := fields[f.JSON]
	if !ok {
		return
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		_, allowed := f.CheckText("")
		errs.Add(f.JSON, backoff.ShowJSON(raw), "must be a string: "+allowed)
		return
	}
	if ok, allowed := f.CheckText(s); !ok {
		errs.Add(f.JSON, backoff.ShowJSON(raw), allowed)
		return
	}
	*dst = s
}

// intMembers reads the integer members of an endpoint policy.
type intMembers struct {
	fields map[string]json.RawMessage
	full   bool // an update: members marked required must be there
	errs   *field.Errors
}

// read sets *dst from member name, an integer from lo through hi (unit
// names what it counts); a missing one keeps *dst unless required in an
// update.
func (m intMembers) read(name string, required bool, lo, hi int64, unit string, dst *int64) {
	allowed := rangeText(lo, hi, unit)
	raw, ok := m.fields[name]
	if !ok {
		if required && m.full {
			m.errs.Add(name, field.Missing, "an update carries the full policy; "+allowed)
		}
		return
	}
	v, ok := jsonInt(raw)
	if !ok || v < lo || v > hi {
		m.errs.Add(name, backoff.ShowJSON(raw), allowed)
		return
	}
	*dst = v
}

// optionalLimit reads a nullable limit member into *dst when present:
// null for none, else an integer from lo through hi.
func optionalLimit(fields map[string]json.RawMessage, name string, lo, hi int64, dst **int64, errs *field.Errors) {
	raw, ok := fields[name]
	switch {
	case !ok:
	case isNull(raw):
		*dst = nil
	default:
		v, ok := jsonInt(raw)
		if ok && v >= lo && v <= hi {
			*dst = &v
			return
		}
		errs.Add(name, backoff.ShowJSON(raw), "must be null (no limit) or "+strings.TrimPrefix(rangeText(lo, hi, ""), "must be "))
	}
}

// optionalBool reads a boolean member into *dst when present.
func optionalBool(fields map[string]json.RawMessage, name string, dst *bool, errs *field.Errors) {
	raw, ok := fields[name]
	if !ok {
		return
	}
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		*dst = true
	case "false":
		*dst = false
	default:
		errs.Add(name, backoff.ShowJSON(raw), "must be true or false")
	}
}

// unknownMembers names each member of fields not in known, in sorted order.
func unknownMembers(fields map[string]json.RawMessage, known []string, prefix string, errs *field.Errors) {
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if slices.Contains(known, k) {
			continue
		}
		name := prefix + k
		if prefix == "" && k == "" {
			name = `""` // never a blank where the field should be
		}
		errs.Add(name, field.Unknown, "allowed fields are "+strings.Join(known, ", "))
	}
}

// isNull reports whether a member is JSON null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonInt reads an integral JSON number; the range is the caller's check.
func jsonInt(raw json.RawMessage) (int64, bool) {
	f, ok := backoff.JSONNumber(raw)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// rangeText is the allowed-range sentence of an integer limit, e.g. "must
// be an integer from 1000 through 43200000 milliseconds".
func rangeText(lo, hi int64, unit string) string {
	return "must be an integer from " + strconv.FormatInt(lo, 10) + " through " + strconv.FormatInt(hi, 10) + unit
}
