package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

func testJobList(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	chargeV2 := newTool(t, s, f.p.ID, f.ep.ID, "charge", "v2")
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1")
	r := &store.Run{ProjectID: f.p.ID, CreatedAt: 1000}
	tx(t, s, func(q store.Queries) error { return q.RunCreate(ctx, r) })

	// Ten jobs created at 100, 200, ... with a mix of tools and states.
	var all []*store.Job
	for i := range 10 {
		var j *store.Job
		switch i % 3 {
		case 0:
			j = job(f.p, f.ep, f.tool, 1)
		case 1:
			j = job(f.p, ep2, chat, 1)
		case 2:
			j = job(f.p, f.ep, chargeV2, 1)
		}
		j.CreatedAt = int64(100 * (i + 1))
		if i%2 == 0 {
			j.RunID = r.ID
		}
		if i%4 != 3 {
			j.FlowKey = []string{"acct_a", "acct_b"}[i%2]
		}
		all = append(all, j)
	}
	f.insert(t, s, all...)
	ojob := job(other, oep, otool, 1)
	ojob.FlowKey = "acct_a" // the same key in another project is another key
	f.insert(t, s, ojob)
	setState(t, s, all[1], wire.JobSucceeded, 5000)
	setState(t, s, all[4], wire.JobFailed, 5000)

	// want lists the indexes of all matching, newest first.
	want := func(match func(i int, j *store.Job) bool) []int64 {
		var out []int64
		for i := len(all) - 1; i >= 0; i-- {
			if match(i, all[i]) {
				out = append(out, all[i].ID)
			}
		}
		return out
	}
	cases := []struct {
		name string
		f    store.JobFilter
		want []int64
	}{
		{"project", store.JobFilter{}, want(func(int, *store.Job) bool { return true })},
		{"states", store.JobFilter{States: []wire.JobState{wire.JobSucceeded, wire.JobFailed}}, []int64{all[4].ID, all[1].ID}},
		{"tool", store.JobFilter{Tool: "charge"}, want(func(_ int, j *store.Job) bool { return j.Tool == "charge" })},
		{"tool and version", store.JobFilter{Tool: "charge", Version: "v2"}, want(func(_ int, j *store.Job) bool { return j.ToolID == chargeV2.ID })},
		{"endpoint", store.JobFilter{EndpointID: ep2.ID}, want(func(_ int, j *store.Job) bool { return j.EndpointID == ep2.ID })},
		{"run", store.JobFilter{RunID: r.ID}, want(func(i int, _ *store.Job) bool { return i%2 == 0 })},
		{"flow key", store.JobFilter{FlowKey: "acct_a"}, want(func(_ int, j *store.Job) bool { return j.FlowKey == "acct_a" })},
		{"flow key and run", store.JobFilter{FlowKey: "acct_a", RunID: r.ID}, want(func(i int, j *store.Job) bool { return j.FlowKey == "acct_a" && i%2 == 0 })},
		{"flow key and endpoint", store.JobFilter{FlowKey: "acct_b", EndpointID: ep2.ID}, want(func(_ int, j *store.Job) bool { return j.FlowKey == "acct_b" && j.EndpointID == ep2.ID })},
		{"flow key nobody has", store.JobFilter{FlowKey: "acct_"}, nil},
		{"created window", store.JobFilter{CreatedAfter: 300, CreatedBefore: 600}, want(func(_ int, j *store.Job) bool { return j.CreatedAt >= 300 && j.CreatedAt < 600 })},
		{"limit", store.JobFilter{Limit: 3}, []int64{all[9].ID, all[8].ID, all[7].ID}},
		{"cursor", store.JobFilter{AfterID: all[7].ID, Limit: 3}, []int64{all[6].ID, all[5].ID, all[4].ID}},
		{"cursor with filter", store.JobFilter{AfterID: all[6].ID, Tool: "charge", Version: "v1"}, []int64{all[3].ID, all[0].ID}},
		{"nothing", store.JobFilter{States: []wire.JobState{wire.JobExhausted}}, nil},
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range cases {
			c.f.ProjectID = f.p.ID
			got, err := q.JobList(ctx, c.f)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if !slices.Equal(ids(got), c.want) {
				t.Errorf("JobList %s = %v, want %v", c.name, ids(got), c.want)
			}
			if c.f.Limit != 0 { // JobCount ignores the limit
				continue
			}
			n, err := q.JobCount(ctx, c.f)
			if err != nil {
				return fmt.Errorf("count %s: %w", c.name, err)
			}
			if n != int64(len(c.want)) {
				t.Errorf("JobCount %s = %d, want %d", c.name, n, len(c.want))
			}
		}
		return nil
	})
	// Walking the cursor page by page visits every job once.
	var seen []int64
	cursor := int64(0)
	for {
		var page []store.Job
		read(t, s, func(q store.Queries) (err error) {
			page, err = q.JobList(ctx, store.JobFilter{ProjectID: f.p.ID, AfterID: cursor, Limit: 4})
			return err
		})
		if len(page) == 0 {
			break
		}
		seen = append(seen, ids(page)...)
		cursor = page[len(page)-1].ID
	}
	if w := want(func(int, *store.Job) bool { return true }); !slices.Equal(seen, w) {
		t.Errorf("paging = %v, want %v", seen, w)
	}
}

// testJobSearch: JobFilter.Q matches an id exactly, or an exact
// idempotency key, tool or endpoint name, or a substring of the payload or
// the last error, ASCII case-insensitively, with LIKE's wildcards literal;
// LastClassification and LastError are stored and read back.
func testJobSearch(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	other := newProject(t, s, "other")
	oep := newEndpoint(t, s, other.ID, "stripe")
	otool := newTool(t, s, other.ID, oep.ID, "charge", "v1")

	a := job(f.p, f.ep, f.tool, 1)
	a.Payload, a.IdempotencyKey = json.RawMessage(`{"customer":"Alice-42","note":"100% off_now"}`), "order-7"
	b := job(f.p, ep2, chat, 1)
	b.Payload = json.RawMessage(`{"prompt":"hello"}`)
	c := job(f.p, f.ep, f.tool, 1)
	c.Payload = json.RawMessage(`{"customer":"bob"}`)
	o := job(other, oep, otool, 1)
	o.Payload = json.RawMessage(`{"customer":"alice-42"}`)
	f.insert(t, s, a, b, c, o)
	tx(t, s, func(q store.Queries) error {
		c.State, c.LastClassification, c.LastError = wire.JobFailed, "http_503", "Upstream said: Service Unavailable"
		c.FinishedAt = 2000
		return q.JobsUpdate(ctx, []*store.Job{c}, nil)
	})
	if got := getJob(t, s, c.ID); got.LastClassification != "http_503" || got.LastError != "Upstream said: Service Unavailable" {
		t.Fatalf("last classification and error = %q, %q; want them stored", got.LastClassification, got.LastError)
	}
	tx(t, s, func(q store.Queries) error {
		b.LastClassification, b.LastError = "succeeded", ""
		return q.JobUpdate(ctx, b)
	})
	if got := getJob(t, s, b.ID); got.LastClassification != "succeeded" || got.LastError != "" {
		t.Fatalf("JobUpdate: last classification and error = %q, %q", got.LastClassification, got.LastError)
	}

	cases := []struct {
		q    string
		want []int64
	}{
		{strconv.FormatInt(b.ID, 10), []int64{b.ID}},
		{strconv.FormatInt(o.ID, 10), nil}, // another project's id
		{"order-7", []int64{a.ID}},
		{"order", nil}, // keys match exactly
		{"chat", []int64{b.ID}},
		{"openai", []int64{b.ID}},
		{"stripe", []int64{c.ID, a.ID}},
		{"ALICE", []int64{a.ID}},
		{"100%", []int64{a.ID}},
		{"0%", []int64{a.ID}},
		{"o_f", nil}, // _ is literal: "off" does not match
		{"off_now", []int64{a.ID}},
		{"service unavail", []int64{c.ID}},
		{"nothing like it", nil},
	}
	for _, tc := range cases {
		var got []store.Job
		var n int64
		read(t, s, func(q store.Queries) (err error) {
			if got, err = q.JobList(ctx, store.JobFilter{ProjectID: f.p.ID, Q: tc.q}); err != nil {
				return err
			}
			n, err = q.JobCount(ctx, store.JobFilter{ProjectID: f.p.ID, Q: tc.q})
			return err
		})
		if !slices.Equal(ids(got), tc.want) || n != int64(len(tc.want)) {
			t.Errorf("q %q: got %v (count %d), want %v", tc.q, ids(got), n, tc.want)
		}
	}
	// A bounded search reads the newest ScanLimit jobs of the other
	// filters only, and JobScanEnd says where it stopped.
	read(t, s, func(q store.Queries) error {
		f := store.JobFilter{ProjectID: f.p.ID, Q: "stripe", ScanLimit: 2}
		got, err := q.JobList(ctx, f) // newest two: c and b; c matches
		if err != nil {
			return err
		}
		end, err := q.JobScanEnd(ctx, f)
		if err != nil {
			return err
		}
		if !slices.Equal(ids(got), []int64{c.ID}) || end.ID != b.ID {
			t.Errorf("bounded search: got %v, scan end %d; want [%d] and %d", ids(got), end, c.ID, b.ID)
		}
		// Counts read the same window: c only, not a below it.
		n, err := q.JobCount(ctx, f)
		if err != nil {
			return err
		}
		byState, err := q.JobCountGroupByState(ctx, f)
		if err != nil {
			return err
		}
		var sum int64
		for _, v := range byState {
			sum += v
		}
		all, err := q.JobCount(ctx, store.JobFilter{ProjectID: f.ProjectID, Q: "stripe"})
		if err != nil {
			return err
		}
		if n != 1 || sum != 1 || byState[c.State] != 1 || all != 2 {
			t.Errorf("bounded counts: JobCount %d, by state %v, unbounded %d; want 1, {%s:1}, 2", n, byState, all, c.State)
		}
		f.AfterID = end.ID
		if got, err = q.JobList(ctx, f); err != nil {
			return err
		}
		if end, err = q.JobScanEnd(ctx, f); err != nil {
			return err
		}
		if !slices.Equal(ids(got), []int64{a.ID}) || end != (store.JobKey{}) {
			t.Errorf("bounded search, next window: got %v, scan end %d; want [%d] and 0", ids(got), end, a.ID)
		}
		for _, nf := range []store.JobFilter{{ProjectID: f.ProjectID, ScanLimit: 2}, {ProjectID: f.ProjectID, Q: strconv.FormatInt(a.ID, 10), ScanLimit: 1}} {
			if end, err := q.JobScanEnd(ctx, nf); err != nil || end != (store.JobKey{}) {
				t.Errorf("JobScanEnd(%+v) = %d, %v; want 0 without a text search", nf, end, err)
			}
		}
		return nil
	})

	// Search narrows the other filters.
	var got []store.Job
	read(t, s, func(q store.Queries) (err error) {
		got, err = q.JobList(ctx, store.JobFilter{ProjectID: f.p.ID, Q: "stripe", States: []wire.JobState{wire.JobFailed}})
		return err
	})
	if !slices.Equal(ids(got), []int64{c.ID}) {
		t.Errorf("q stripe, state failed: got %v, want [%d]", ids(got), c.ID)
	}
}

// testJobSort: JobFilter.Sort orders JobList by id either way or by finish
// time either way (ties split by id), a finished order selects failed and
// exhausted jobs only, the cursor (JobKeyOf the last job) continues a walk
// without skipping or repeating a job even across ties of finished_at, and
// a bounded text search's window and JobScanEnd follow the order.
func testJobSort(t *testing.T, s store.Store) {
	ctx := t.Context()
	f := newFixture(t, s)
	ep2 := newEndpoint(t, s, f.p.ID, "openai")
	chat := newTool(t, s, f.p.ID, ep2.ID, "chat", "v1")
	j := make([]*store.Job, 8)
	for i := range j {
		j[i] = job(f.p, f.ep, f.tool, 1)
		if i == 7 {
			j[i] = job(f.p, ep2, chat, 1)
		}
	}
	f.insert(t, s, j...)
	// Finish order differs from id order, with three jobs finished in the
	// same millisecond (2000); j[4] succeeded and j[6] is scheduled.
	for _, x := range []struct {
		i     int
		state wire.JobState
		at    int64
		err   string
	}{
		{0, wire.JobFailed, 3000, "boom"},
		{1, wire.JobExhausted, 1000, "boom"},
		{2, wire.JobFailed, 2000, "boom"},
		{3, wire.JobFailed, 2000, "boom"},
		{4, wire.JobSucceeded, 1500, "boom"},
		{5, wire.JobExhausted, 2000, ""},
		{7, wire.JobFailed, 500, ""},
	} {
		j[x.i].LastError = x.err
		setState(t, s, j[x.i], x.state, x.at)
	}
	idsOf := func(is ...int) []int64 {
		var out []int64
		for _, i := range is {
			out = append(out, j[i].ID)
		}
		return out
	}
	failed := []wire.JobState{wire.JobFailed}
	cases := []struct {
		name string
		f    store.JobFilter
		want []int64
	}{
		{"id_desc", store.JobFilter{Sort: wire.SortIDDesc}, idsOf(7, 6, 5, 4, 3, 2, 1, 0)},
		{"default is id_desc", store.JobFilter{}, idsOf(7, 6, 5, 4, 3, 2, 1, 0)},
		{"id_asc", store.JobFilter{Sort: wire.SortIDAsc}, idsOf(0, 1, 2, 3, 4, 5, 6, 7)},
		{"id_asc, failed", store.JobFilter{Sort: wire.SortIDAsc, States: failed}, idsOf(0, 2, 3, 7)},
		{"finished_desc", store.JobFilter{Sort: wire.SortFinishedDesc}, idsOf(0, 5, 3, 2, 1, 7)},
		{"finished_asc", store.JobFilter{Sort: wire.SortFinishedAsc}, idsOf(7, 1, 2, 3, 5, 0)},
		{"finished_desc, failed", store.JobFilter{Sort: wire.SortFinishedDesc, States: failed}, idsOf(0, 3, 2, 7)},
		{"finished_desc, failed and exhausted", store.JobFilter{Sort: wire.SortFinishedDesc, States: []wire.JobState{wire.JobFailed, wire.JobExhausted}}, idsOf(0, 5, 3, 2, 1, 7)},
		{"finished_desc, endpoint", store.JobFilter{Sort: wire.SortFinishedDesc, EndpointID: f.ep.ID}, idsOf(0, 5, 3, 2, 1)},
		{"finished_desc, tool", store.JobFilter{Sort: wire.SortFinishedDesc, Tool: "chat"}, idsOf(7)},
		{"finished_desc, cursor in a tie", store.JobFilter{Sort: wire.SortFinishedDesc, AfterFinishedAt: 2000, AfterID: j[5].ID}, idsOf(3, 2, 1, 7)},
		{"finished_asc, cursor in a tie", store.JobFilter{Sort: wire.SortFinishedAsc, AfterFinishedAt: 2000, AfterID: j[2].ID}, idsOf(3, 5, 0)},
		{"id_asc, cursor", store.JobFilter{Sort: wire.SortIDAsc, AfterID: j[5].ID}, idsOf(6, 7)},
		{"finished_desc, search", store.JobFilter{Sort: wire.SortFinishedDesc, Q: "boom"}, idsOf(0, 3, 2, 1)},
	}
	read(t, s, func(q store.Queries) error {
		for _, c := range cases {
			c.f.ProjectID = f.p.ID
			got, err := q.JobList(ctx, c.f)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			if !slices.Equal(ids(got), c.want) {
				t.Errorf("JobList %s = %v, want %v", c.name, ids(got), c.want)
			}
			if c.f.AfterID != 0 {
				continue
			}
			if n, err := q.JobCount(ctx, c.f); err != nil || n != int64(len(c.want)) {
				t.Errorf("JobCount %s = %d, %v; want %d", c.name, n, err, len(c.want))
			}
		}
		return nil
	})

	// Walking each order page by page, the cursor the last job's key, visits
	// every job once in order; pages of 2 and 3 end inside the tie at 2000.
	for _, c := range cases[:8] {
		for _, size := range []int{1, 2, 3} {
			var seen []int64
			fl := c.f
			fl.ProjectID, fl.Limit = f.p.ID, size
			for range 20 {
				var page []store.Job
				read(t, s, func(q store.Queries) (err error) {
					page, err = q.JobList(ctx, fl)
					return err
				})
				if len(page) == 0 {
					break
				}
				seen = append(seen, ids(page)...)
				k := store.JobKeyOf(&page[len(page)-1], fl.Sort)
				fl.AfterID, fl.AfterFinishedAt = k.ID, k.FinishedAt
			}
			if !slices.Equal(seen, c.want) {
				t.Errorf("%s in pages of %d = %v, want %v", c.name, size, seen, c.want)
			}
		}
	}

	// A bounded search reads windows of ScanLimit jobs in the list's order;
	// JobScanEnd is the key of each window's last job, so continuing from it
	// finds every match once, in order.
	for _, c := range []struct {
		sort wire.JobSort
		want []int64
	}{
		{wire.SortFinishedDesc, idsOf(0, 3, 2, 1)},
		{wire.SortFinishedAsc, idsOf(1, 2, 3, 0)},
		{wire.SortIDAsc, idsOf(0, 1, 2, 3, 4)},
		{wire.SortIDDesc, idsOf(4, 3, 2, 1, 0)},
	} {
		fl := store.JobFilter{ProjectID: f.p.ID, Sort: c.sort, Q: "boom", ScanLimit: 2}
		var seen []int64
		windows := 0
		read(t, s, func(q store.Queries) error {
			for range 20 {
				got, err := q.JobList(ctx, fl)
				if err != nil {
					return err
				}
				seen = append(seen, ids(got)...)
				windows++
				end, err := q.JobScanEnd(ctx, fl)
				if err != nil {
					return err
				}
				if end == (store.JobKey{}) {
					return nil
				}
				if c.sort.ByFinish() != (end.FinishedAt != 0) {
					t.Errorf("%s: scan end %+v; want a finish time with the finished orders only", c.sort, end)
				}
				fl.AfterID, fl.AfterFinishedAt = end.ID, end.FinishedAt
			}
			return nil
		})
		if !slices.Equal(seen, c.want) {
			t.Errorf("bounded search %s = %v in %d windows, want %v", c.sort, seen, windows, c.want)
		}
	}
}
