package storetest

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
)

func testTools(t *testing.T, s store.Store) {
	ctx := t.Context()
	p := newProject(t, s, "a")
	other := newProject(t, s, "b")
	ep := newEndpoint(t, s, p.ID, "stripe")
	oep := newEndpoint(t, s, other.ID, "stripe")
	full := &store.Tool{ProjectID: p.ID, Name: "charge", Version: "v2", EndpointID: ep.ID, Description: "Charge a card",
		Schema: json.RawMessage(`{"type":"object","required":["amount"]}`), TimeoutMs: ptr(12_000),
		RetryPolicy: json.RawMessage(`{"preset":"CUSTOM","maxAttempts":4}`), CreatedAt: 3000, FlowKeyFrom: "/customer/id"}
	bare := &store.Tool{ProjectID: p.ID, Name: "charge", Version: "v1", EndpointID: ep.ID, CreatedAt: 3001}
	refund := &store.Tool{ProjectID: p.ID, Name: "refund", Version: "v1", EndpointID: ep.ID, Schema: json.RawMessage("null"), CreatedAt: 3002}
	hook := &store.Tool{ProjectID: p.ID, Name: "hook", Version: "v1", EndpointID: ep.ID, CreatedAt: 3003,
		Delivery: json.RawMessage(`{"method":"POST","url":"https://example.com/{id}"}`), DeliverySecret: "whsec_abc"}
	tx(t, s, func(q store.Queries) error {
		for _, tl := range []*store.Tool{full, bare, refund, hook} {
			if err := q.ToolCreate(ctx, tl); err != nil {
				return err
			}
		}
		return nil
	})
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1") // same name@version, other project
	txErr(t, s, "ToolCreate of a published name@version", store.ErrConflict, func(q store.Queries) error {
		return q.ToolCreate(ctx, &store.Tool{ProjectID: p.ID, Name: "charge", Version: "v2", EndpointID: ep.ID, CreatedAt: 4000})
	})
	read(t, s, func(q store.Queries) error {
		got, err := q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: p.ID, Name: "charge", Version: "v2"})
		if err != nil {
			return err
		}
		if got.ID != full.ID || got.EndpointID != ep.ID || got.Description != "Charge a card" || string(got.Schema) != string(full.Schema) ||
			!eqPtr(got.TimeoutMs, ptr(12_000)) || string(got.RetryPolicy) != string(full.RetryPolicy) || got.CreatedAt != 3000 ||
			got.FlowKeyFrom != "/customer/id" {
			t.Errorf("ToolGetInProject full = %+v", got)
		}
		got, err = q.ToolGetAnyProject(ctx, bare.ID)
		if err != nil {
			return err
		}
		if got.Name != "charge" || got.Version != "v1" || got.Schema != nil || got.TimeoutMs != nil || got.RetryPolicy != nil || got.Delivery != nil || got.DeliverySecret != "" ||
			got.FlowKeyFrom != "" {
			t.Errorf("ToolGetAnyProject bare = %+v, want nil schema, timeout, policy and delivery, and no flowKeyFrom", got)
		}
		got, err = q.ToolGetAnyProject(ctx, hook.ID)
		if err != nil {
			return err
		}
		if string(got.Delivery) != string(hook.Delivery) || got.DeliverySecret != "whsec_abc" {
			t.Errorf("ToolGetAnyProject hook = %+v, want its delivery and secret", got)
		}
		hooks, err := q.ToolListDelivery(ctx)
		if err != nil {
			return err
		}
		if len(hooks) != 1 || hooks[0].ID != hook.ID {
			t.Errorf("ToolListDelivery = %+v, want only tool %d", hooks, hook.ID)
		}
		got, err = q.ToolGetAnyProject(ctx, refund.ID)
		if err != nil {
			return err
		}
		if got.Schema != nil {
			t.Errorf("a JSON null schema reads back as %q, want nil", got.Schema)
		}
		_, err = q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: p.ID, Name: "charge", Version: "v3"})
		wantErr(t, "ToolGetInProject missing", err, store.ErrNotFound)
		_, err = q.ToolGetAnyProject(ctx, refund.ID+100)
		wantErr(t, "ToolGetAnyProject missing", err, store.ErrNotFound)
		// name@version is the project's: each project finds its own tool;
		// by id, any project's is found.
		got, err = q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: other.ID, Name: "charge", Version: "v1"})
		if err != nil {
			return err
		}
		if got.ID != otool.ID || got.ProjectID != other.ID || got.EndpointID != oep.ID {
			t.Errorf("ToolGetInProject of the other project's charge@v1 = %+v, want tool %d", got, otool.ID)
		}
		_, err = q.ToolGetInProject(ctx, &store.ToolGetInProjectParams{ProjectID: other.ID, Name: "charge", Version: "v2"})
		wantErr(t, "ToolGetInProject of another project's name@version", err, store.ErrNotFound)
		got, err = q.ToolGetAnyProject(ctx, otool.ID)
		if err != nil {
			return err
		}
		if got.ID != otool.ID || got.ProjectID != other.ID || got.Name != "charge" || got.Version != "v1" {
			t.Errorf("ToolGetAnyProject of the other project's tool = %+v, want tool %d", got, otool.ID)
		}
		list, err := q.ToolList(ctx, p.ID)
		if err != nil {
			return err
		}
		var refs []string
		for _, tl := range list {
			refs = append(refs, tl.Name+"@"+tl.Version)
		}
		if want := []string{"charge@v1", "charge@v2", "hook@v1", "refund@v1"}; !slices.Equal(refs, want) {
			t.Errorf("ToolList = %v, want %v", refs, want)
		}
		return nil
	})
}
