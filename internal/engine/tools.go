package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/webhook"
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
	RetryPolicy   *backoff.Policy // the CUSTOM policy, only with RetryPreset CUSTOM
	Delivery      *DeliverySpec   // the HTTP target Ratchet delivers to; nil for a tool run by workers
	// FlowKeyFrom is a JSON Pointer into the payload (ParsePointer) whose
	// string or integer becomes the flow key of a job enqueued without
	// one; "" for none.
	FlowKeyFrom string
}

// CheckSchema reports why raw is not a payload schema Ratchet can use:
// not a valid JSON Schema, or one that refers outside itself. The error is
// one line, for a field error.
func CheckSchema(raw json.RawMessage) error {
	if _, err := compileSchema(raw); err != nil {
		return errors.New(firstLine(err.Error()))
	}
	return nil
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

// schemaURL is where a payload schema lives while it compiles: an address
// of its own, so a relative $ref resolves inside it and never against the
// server's working directory, and no error names a server path.
const schemaURL = "mem://ratchet/payload-schema.json"

// MaxSchemaBytes bounds a tool's payload schema.
const MaxSchemaBytes = 64 << 10

// noLoader refuses every reference outside the schema document: the
// library would otherwise read file:// URLs (and any path) from the
// server's disk. The drafts' metaschemas are built in and need no loading.
type noLoader struct{}

func (noLoader) Load(string) (any, error) {
	return nil, errors.New("a payload schema may refer only to itself (\"#/$defs/...\")")
}

// compileSchema compiles a payload schema from its own bytes and nothing
// else: no file, no network. It is pure computation on at most
// MaxSchemaBytes, done when the tool is published.
func compileSchema(raw json.RawMessage) (*compiledSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return nil, err
	}
	return &compiledSchema{s: s}, nil
}

// compileSchemas makes sure the payload schemas of the tools reqs name are
// compiled before the enqueue's write transaction, so no row is locked while
// a schema compiles. Tools are immutable, so a compiled schema is kept for
// the life of the process; after the first enqueue of a tool this costs a
// map lookup.
func (e *Engine) compileSchemas(ctx context.Context, p *Principal, reqs []EnqueueRequest) error {
	var missing []string
	for _, r := range reqs {
		if id, ok := e.toolIDCache.Load(toolRef{p.ProjectID, r.Tool}); ok {
			if _, ok := e.schemas.Load(id); ok {
				continue
			}
		}
		if !slices.Contains(missing, r.Tool) {
			missing = append(missing, r.Tool)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var tools []*store.Tool
	err := e.st.Read(ctx, func(q store.Queries) error {
		for _, ref := range missing {
			name, version, _ := ParseToolRef(ref)
			t, err := q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: p.ProjectID, Name: name, Version: version})
			if errors.Is(err, store.ErrNotFound) {
				continue // the enqueue names the unknown tool
			}
			if err != nil {
				return err
			}
			tools = append(tools, t)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range tools {
		if _, err := e.schemaFor(t); err != nil {
			// Only a tool published before schemas were checked this
			// strictly (one that refers outside itself) gets here.
			return invalidField("tool", strconv.Quote(t.Name+"@"+t.Version),
				"its payload schema no longer compiles ("+firstLine(err.Error())+"); publish a new version of the tool")
		}
		e.toolIDCache.Store(toolRef{p.ProjectID, t.Name + "@" + t.Version}, t.ID)
		e.noteTool(t)
	}
	return nil
}

func (e *Engine) schemaFor(t *store.Tool) (*compiledSchema, error) {
	if len(t.Schema) == 0 || string(t.Schema) == "null" {
		e.schemas.Store(t.ID, (*compiledSchema)(nil))
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
		policy, _ = json.Marshal(s.RetryPolicy)
	default:
		policy, _ = json.Marshal(backoff.PresetPolicy(backoff.Preset(s.RetryPreset)))
	}
	t := &store.Tool{ProjectID: p.ProjectID, Name: s.Name, Version: s.Version, Description: s.Description, Schema: s.PayloadSchema,
		TimeoutMs: s.TimeoutMs, RetryPolicy: policy, CreatedAt: e.nowMs(), FlowKeyFrom: s.FlowKeyFrom}
	if s.Delivery != nil {
		if err := e.checkDeliveryHost(s.Delivery); err != nil {
			return nil, err
		}
		t.Delivery, _ = json.Marshal(s.Delivery)
		t.DeliverySecret = s.Delivery.Secret
		if t.DeliverySecret == "" && s.Delivery.GenerateSecret {
			t.DeliverySecret = webhook.NewSecret()
		}
	}
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
	if err == nil {
		e.noteTool(t)
		if t.Delivery != nil {
			e.delivery.mu.Lock()
			e.delivery.outdated = true
			e.delivery.mu.Unlock()
			e.signal(ctx)
		}
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

// ListRuns lists the project's runs newest first, below afterID when set,
// at most limit (wire.DefaultListLimit when out of range).
func (e *Engine) ListRuns(ctx context.Context, p *Principal, afterID int64, limit int) ([]store.Run, error) {
	if limit <= 0 || limit > wire.MaxListLimit {
		limit = wire.DefaultListLimit
	}
	var out []store.Run
	err := e.st.Read(ctx, func(q store.Queries) (err error) {
		out, err = q.RunList(ctx, &store.RunListParams{ProjectID: p.ProjectID, AfterID: afterID, Limit: limit})
		return err
	})
	return out, storeErr(err, "runs")
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
