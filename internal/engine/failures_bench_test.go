package engine_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// BenchmarkFailureGroups groups an endpoint's failures when more failed
// than wire.FailureScanBound (12,000 on SQLite, 40 causes): the read stops
// at the bound, so one call costs the bound's rows, not the table.
func BenchmarkFailureGroups(b *testing.B) {
	h := newHarness(&testing.T{})
	ep := h.endpoint("payments", `{"maxConcurrent":3}`)
	tl := h.tool(`{"name":"pay","version":"1","endpoint":"payments"}`)
	now := h.clk.Now().UnixMilli()
	err := h.st.Tx(h.ctx, func(q store.Queries) error {
		for i := range 12_000 {
			j := &store.Job{ProjectID: h.owner.ProjectID, ToolID: tl.ID, Tool: tl.Name, Version: tl.Version, EndpointID: ep.ID, Endpoint: ep.Name,
				Payload: json.RawMessage(`{}`), Policy: json.RawMessage(`{"preset":"STANDARD","maxAttempts":1}`), MaxAttempts: 1, TimeoutMs: 30_000,
				State: wire.JobExhausted, Attempt: 1, CreatedAt: now - 1000, UpdatedAt: now, FinishedAt: now - int64(i)*1000,
				LastClassification: "server_error", LastError: fmt.Sprintf("cause %c: timeout after %dms on req %04x", 'a'+i%26, 3000+i%97, i)}
			if err := q.JobInsert(h.ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		l, err := h.e.FailureGroups(h.ctx, h.owner, "payments", 0, 0, 24)
		if err != nil || !l.Capped || l.Scanned != wire.FailureScanBound {
			b.Fatalf("%v %+v", err, l)
		}
	}
	_ = engine.DefaultFailureWindowMs
}
