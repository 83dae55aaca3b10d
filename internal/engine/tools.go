package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// ToolSpec is a tool contract to publish.
type ToolSpec struct {
	Name          string
	Version       string
	Endpoint      string
	Description   string
	PayloadSchema json.RawMessage // JSON Schema; empty for any JSON payload
	TimeoutMs     *int64
	RetryPreset   string          // "" for none: the endpoint's policy applies
	RetryPolicy   json.RawMessage // the CUSTOM document, only with RetryPreset CUSTOM
}

var toolFields = []string{"name", "version", "endpoint", "description", "payloadSchema", "timeoutMs", "retryPreset", "retryPolicy"}

// ParseToolSpec reads a tool contract document, reporting every problem.
func ParseToolSpec(data []byte) (ToolSpec, error) {
	fields, err := backoff.ReadObject(data, "tool")
	if fields == nil {
		es, _ := field.As(err)
		return ToolSpec{}, invalid(es)
	}
	var errs field.Errors
	if err != nil {
		errs.Merge(err)
	}
	known := map[string]bool{}
	for _, f := range toolFields {
		known[f] = true
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !known[k] {
			errs = append(errs, &field.Error{Field: fieldName(k), Value: field.Unknown, Allowed: "allowed fields are " + strings.Join(toolFields, ", ")})
		}
	}
	var s ToolSpec
	str := func(name string, required bool, dst *string) {
		raw, ok := fields[name]
		if !ok {
			if required {
				errs = append(errs, &field.Error{Field: name, Value: field.Missing, Allowed: "required string"})
			}
			return
		}
		if json.Unmarshal(raw, dst) != nil {
			errs = append(errs, &field.Error{Field: name, Value: backoff.ShowJSON(raw), Allowed: "must be a string"})
		}
	}
	str("name", true, &s.Name)
	str("version", true, &s.Version)
	str("endpoint", true, &s.Endpoint)
	str("description", false, &s.Description)
	str("retryPreset", false, &s.RetryPreset)
	if s.Name != "" && !nameRE.MatchString(s.Name) {
		errs = append(errs, &field.Error{Field: "name", Value: strconv.Quote(s.Name), Allowed: nameAllowed})
	}
	if s.Version != "" && !versionRE.MatchString(s.Version) {
		errs = append(errs, &field.Error{Field: "version", Value: strconv.Quote(s.Version), Allowed: versionAllowed})
	}
	if len(s.Description) > 4000 {
		errs = append(errs, &field.Error{Field: "description", Value: "a text of " + strconv.Itoa(len(s.Description)) + " bytes", Allowed: "must be at most 4000 bytes"})
	}
	if raw, ok := fields["payloadSchema"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		s.PayloadSchema = raw
		if _, err := compileSchema(raw); err != nil {
			errs = append(errs, &field.Error{Field: "payloadSchema", Value: backoff.ShowJSON(raw), Allowed: "must be a valid JSON Schema (" + firstLine(err.Error()) + ")"})
		}
	}
	if raw, ok := fields["timeoutMs"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		v, ok := jsonInt(raw)
		if !ok || v < 1000 || v > 43_200_000 {
			errs = append(errs, &field.Error{Field: "timeoutMs", Value: backoff.ShowJSON(raw), Allowed: "must be null or an integer from 1000 through 43200000 milliseconds"})
		} else {
			s.TimeoutMs = &v
		}
	}
	raw, hasPolicy := fields["retryPolicy"]
	if hasPolicy && string(bytes.TrimSpace(raw)) == "null" {
		hasPolicy = false
	}
	switch backoff.Preset(s.RetryPreset) {
	case "":
		if hasPolicy {
			errs = append(errs, &field.Error{Field: "retryPolicy", Value: backoff.ShowJSON(raw), Allowed: `needs "retryPreset": "CUSTOM"`})
		}
	case backoff.Standard, backoff.Aggressive, backoff.Relaxed:
		if hasPolicy {
			errs = append(errs, &field.Error{Field: "retryPolicy", Value: backoff.ShowJSON(raw), Allowed: "built-in presets forbid a custom policy; use \"retryPreset\": \"CUSTOM\""})
		}
	case backoff.Custom:
		if !hasPolicy {
			errs = append(errs, &field.Error{Field: "retryPolicy", Value: field.Missing, Allowed: "CUSTOM requires a retryPolicy with every field"})
			break
		}
		pf, perr := backoff.ReadObject(raw, "retryPolicy")
		if pf == nil {
			errs.Merge(perr)
			break
		}
		if perr != nil {
			errs.Merge(perr)
		}
		if _, ok := pf["preset"]; !ok {
			pf["preset"] = json.RawMessage(`"CUSTOM"`)
		}
		p, err := backoff.PolicyFromFields(pf, "retryPolicy.")
		if err != nil {
			errs.Merge(err)
		} else if p.Preset != backoff.Custom {
			errs = append(errs, &field.Error{Field: "retryPolicy.preset", Value: strconv.Quote(string(p.Preset)), Allowed: `must be "CUSTOM" to match retryPreset`})
		} else {
			s.RetryPolicy, _ = json.Marshal(p)
		}
	default:
		errs = append(errs, &field.Error{Field: "retryPreset", Value: strconv.Quote(s.RetryPreset), Allowed: "must be one of STANDARD, AGGRESSIVE, RELAXED, CUSTOM, or absent to use the endpoint's policy"})
	}
	if len(errs) > 0 {
		return ToolSpec{}, invalid(errs)
	}
	return s, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

type compiledSchema struct{ s *jsonschema.Schema }

func jsonschemaUnmarshal(b []byte) (any, error) { return jsonschema.UnmarshalJSON(bytes.NewReader(b)) }

func compileSchema(raw json.RawMessage) (*compiledSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("payload.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("payload.json")
	if err != nil {
		return nil, err
	}
	return &compiledSchema{s: s}, nil
}

func (e *Engine) schemaFor(t *store.Tool) (*compiledSchema, error) {
	if len(t.Schema) == 0 {
		return nil, nil
	}
	if v, ok := e.schemas.Load(t.ID); ok {
		return v.(*compiledSchema), nil
	}
	c, err := compileSchema(t.Schema)
	if err != nil {
		return nil, err
	}
	e.schemas.Store(t.ID, c)
	return c, nil
}

// toolPolicy is the tool's own retry policy, if it has one.
func toolPolicy(t *store.Tool) (*backoff.Policy, error) {
	if len(t.RetryPolicy) == 0 {
		return nil, nil
	}
	p, err := backoff.ParsePolicy(t.RetryPolicy)
	if err != nil {
		return nil, err
	}
	return &p, nil
}

// PublishTool stores an immutable tool contract.
func (e *Engine) PublishTool(ctx context.Context, p *Principal, s ToolSpec) (*store.Tool, error) {
	if err := p.Require(wire.ScopeOwner); err != nil {
		return nil, err
	}
	var policy json.RawMessage
	switch backoff.Preset(s.RetryPreset) {
	case "":
	case backoff.Custom:
		policy = s.RetryPolicy
	default:
		policy, _ = json.Marshal(backoff.PresetPolicy(backoff.Preset(s.RetryPreset)))
	}
	t := &store.Tool{ProjectID: p.ProjectID, Name: s.Name, Version: s.Version, Description: s.Description, Schema: s.PayloadSchema,
		TimeoutMs: s.TimeoutMs, RetryPolicy: policy, CreatedAt: e.nowMs()}
	err := e.st.Tx(ctx, func(q store.Queries) error {
		ep, err := q.EndpointGetInProject(ctx, &store.EndpointGetInProjectParams{ProjectID: p.ProjectID, Name: s.Endpoint})
		if errors.Is(err, store.ErrNotFound) {
			return invalidField("endpoint", strconv.Quote(s.Endpoint), "must name an existing endpoint of this project")
		}
		if err != nil {
			return err
		}
		t.EndpointID = ep.ID
		if backoff.Preset(s.RetryPreset) == backoff.Custom {
			if err := checkPlan(ctx, q, p.ProjectID, backoff.Policy{Preset: backoff.Custom}, "retryPreset"); err != nil {
				return err
			}
		}
		return q.ToolCreate(ctx, t)
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, conflict("tool %s@%s is already published; contracts are immutable, publish a new version", s.Name, s.Version)
	}
	return t, storeErr(err, "tool")
}

// Tool reads a tool contract.
func (e *Engine) Tool(ctx context.Context, p *Principal, name, version string) (*store.Tool, *store.Endpoint, error) {
	var t *store.Tool
	var ep *store.Endpoint
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		if t, err = q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: p.ProjectID, Name: name, Version: version}); err != nil {
			return err
		}
		ep, err = q.EndpointGetAnyProject(ctx, &store.EndpointGetAnyProjectParams{ID: t.EndpointID})
		return err
	})
	return t, ep, storeErr(err, fmt.Sprintf("tool %s@%s", name, version))
}

// Tools lists the project's tool contracts.
func (e *Engine) Tools(ctx context.Context, p *Principal) ([]store.Tool, error) {
	var out []store.Tool
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.ToolList(ctx, p.ProjectID)
		return err
	})
	return out, storeErr(err, "tools")
}

// StartRun opens a run.
func (e *Engine) StartRun(ctx context.Context, p *Principal, name string) (*store.Run, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	if len(name) > 200 {
		return nil, invalidField("name", "a name of "+strconv.Itoa(len(name))+" characters", "must be at most 200 characters")
	}
	r := &store.Run{ProjectID: p.ProjectID, Name: name, State: wire.RunOpen, CreatedAt: e.nowMs()}
	err := e.st.Tx(ctx, func(q store.Queries) error { return q.RunCreate(ctx, r) })
	return r, storeErr(err, "run")
}

// FinishRun closes a run. Its steps go on; a finished run takes no new steps.
func (e *Engine) FinishRun(ctx context.Context, p *Principal, id int64) (*store.Run, error) {
	if err := p.Require(wire.ScopeProducer); err != nil {
		return nil, err
	}
	var r *store.Run
	err := e.st.Tx(ctx, func(q store.Queries) error {
		cur, err := q.RunGetInProject(ctx, &store.RunGetInProjectParams{ProjectID: p.ProjectID, ID: id})
		if err != nil {
			return err
		}
		if cur.State == wire.RunFinished {
			r = cur
			return nil
		}
		if err := q.RunFinish(ctx, &store.RunFinishParams{ProjectID: p.ProjectID, ID: id, Now: e.nowMs()}); err != nil {
			return err
		}
		r, err = q.RunGetInProject(ctx, &store.RunGetInProjectParams{ProjectID: p.ProjectID, ID: id})
		return err
	})
	return r, storeErr(err, "run "+strconv.FormatInt(id, 10))
}

// GetRun reads a run with its steps (newest first, up to limit).
func (e *Engine) GetRun(ctx context.Context, p *Principal, id int64, limit int) (*store.Run, []store.Job, error) {
	var r *store.Run
	var jobs []store.Job
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		if r, err = q.RunGetInProject(ctx, &store.RunGetInProjectParams{ProjectID: p.ProjectID, ID: id}); err != nil {
			return err
		}
		jobs, err = q.JobList(ctx, store.JobFilter{ProjectID: p.ProjectID, RunID: id, Limit: limit})
		return err
	})
	return r, jobs, storeErr(err, "run "+strconv.FormatInt(id, 10))
}
