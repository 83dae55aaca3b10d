package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/wire"
)

// GET /v1/stream pushes changes to the dashboard as server-sent events
// (text/event-stream). The page reads it with fetch() and a stream reader,
// since EventSource cannot send the Authorization header.
//
// A stream is a loop: every interval (1 s) it re-reads its view with the
// same engine calls as the plain routes and writes an event only when the
// result differs from the last one sent, so an idle stream costs one read a
// second and no bytes but a ping comment every 15 s. Streams are bounded
// per key and per node (429 beyond), end when the server starts draining
// (a stream never holds up a graceful shutdown), and extend their own
// write deadline before each write, so a healthy stream is never cut by a
// deadline while a client that stopped reading is dropped.

const (
	// MaxStreamsPerKey is how many streams one API key may hold open.
	MaxStreamsPerKey = 8
	// MaxStreamsPerNode is how many streams one server node serves at once.
	MaxStreamsPerNode = 256
	// DefaultStreamInterval is how often a stream re-reads its view.
	DefaultStreamInterval = time.Second
	// DefaultStreamPing is how often an idle stream sends ": ping".
	DefaultStreamPing = 15 * time.Second
	// streamWriteGrace is how long one write may take before the client
	// counts as gone.
	streamWriteGrace = 30 * time.Second
	// slowStreamEvery: a jobs stream whose counts are counted (a search,
	// a run, a creation window) re-reads every this many intervals.
	slowStreamEvery = 10
	// streamKeyCheck is how often an open stream checks that its key is
	// still valid: a revoked key stops seeing changes within this time.
	streamKeyCheck = 10 * time.Second
)

// streams counts the open streams of one API.
type streams struct {
	mu       sync.Mutex
	perKey   map[int64]int
	total    int
	interval time.Duration
	ping     time.Duration
	perNode  int
	// overviews are the latest overview read per project, shared by that
	// project's overview streams (every dashboard tab on the overview
	// holds one): one read per project and interval, not one per stream.
	overviews map[int64]*sharedView
	now       func() time.Time
}

// sharedView is one read of a view that several streams reuse.
type sharedView struct {
	mu     sync.Mutex
	at     time.Time
	writes int64 // the project's operator writes when the read began
	event  string
	data   any
	same   []byte
}

func newStreams() *streams {
	return &streams{perKey: map[int64]int{}, interval: DefaultStreamInterval, ping: DefaultStreamPing, perNode: MaxStreamsPerNode,
		overviews: map[int64]*sharedView{}, now: time.Now}
}

// sharedOverview returns project's overview as read by any of its streams
// within the last 0.9 interval, or reads it (one reader at a time; the
// others wait for its result). A failed read is not kept. Streams tick
// out of step, so a change may reach a stream up to about two intervals
// late instead of one — but never an operator's write: writes is the
// project's count of operator writes read just now (engine.Writes), and a
// read that began before the count moved is not reused, so the first
// event of an overview opened after a pause shows the pause, whichever
// node took it.
func (s *streams) sharedOverview(project, writes int64, read func() (string, any, []byte, error)) (string, any, []byte, error) {
	s.mu.Lock()
	v := s.overviews[project]
	if v == nil {
		// Forget projects nobody has read for a minute, so the map stays
		// as small as the projects with open overview streams.
		for id, o := range s.overviews {
			if o.mu.TryLock() {
				if s.now().Sub(o.at) > time.Minute {
					delete(s.overviews, id)
				}
				o.mu.Unlock()
			}
		}
		v = &sharedView{}
		s.overviews[project] = v
	}
	s.mu.Unlock()
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.at.IsZero() && v.writes >= writes && s.now().Sub(v.at) < s.interval*9/10 {
		return v.event, v.data, v.same, nil
	}
	event, data, same, err := read()
	if err != nil {
		return "", nil, nil, err
	}
	v.at, v.writes, v.event, v.data, v.same = s.now(), writes, event, data, same
	return event, data, same, nil
}

// SetStreamTiming changes how often streams re-read their view and how
// often an idle stream pings (for tests); zero keeps the default. Call it
// before serving.
func (a *API) SetStreamTiming(interval, ping time.Duration) {
	if interval > 0 {
		a.streams.interval = interval
	}
	if ping > 0 {
		a.streams.ping = ping
	}
}

// open is how many streams are open now.
func (s *streams) open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// acquire takes a stream slot for key, or says why there is none.
func (s *streams) acquire(key int64) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.perKey[key] >= MaxStreamsPerKey:
		return nil, &transportError{status: http.StatusTooManyRequests, code: "too_many_streams",
			message: "this key already holds " + strconv.Itoa(MaxStreamsPerKey) + " open streams, the most one key may hold; close one (a dashboard tab) and try again"}
	case s.total >= s.perNode:
		return nil, &transportError{status: http.StatusTooManyRequests, code: "too_many_streams",
			message: "this server already serves " + strconv.Itoa(s.perNode) + " streams, the most one node serves; try again later"}
	}
	s.perKey[key]++
	s.total++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.perKey[key]--; s.perKey[key] <= 0 {
				delete(s.perKey, key)
			}
			s.total--
		})
	}, nil
}

// streamView reads one view: the event name, its data, and the bytes
// compared to decide whether it changed.
type streamView func(ctx context.Context, first bool) (event string, data any, same []byte, err error)

func (a *API) streamRoute() Route {
	return Route{Method: "GET", Path: "/v1/stream", Scopes: producer, Status: 200, stream: true,
		Summary: "Server-sent events (text/event-stream) for a job (job=ID), the overview (view=overview) or a jobs list (view=jobs and the list's filters): an event when the view changes, a ping comment every 15 s; at most 8 streams per key and 256 per node (429)",
		query:   reflect.TypeFor[wire.StreamQuery](), handler: a.stream}
}

func (a *API) stream(w http.ResponseWriter, r *http.Request) {
	c := &call[wire.StreamQuery]{r: r}
	if err := admit(a, w, c, "/v1/stream", producer, decodeOwn); err != nil {
		a.fail(w, r, err)
		return
	}
	p := c.p
	view, err := a.streamViewOf(r, p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	release, err := a.streams.acquire(p.KeyID)
	if err != nil {
		w.Header().Set("Retry-After", "5")
		a.fail(w, r, err)
		return
	}
	defer release()
	ctx := r.Context()
	// The first read answers errors (an unknown job) as a plain JSON
	// error, before the stream starts.
	event, data, last, err := view(ctx, true)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	sw := startEvents(w)
	if !sw.write(eventBytes(event, data)) {
		return
	}
	a.streamEvents(ctx, r, sw, view, last)
}

// eventWriter writes the events of one stream.
type eventWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// startEvents sends the headers of an event stream.
func startEvents(w http.ResponseWriter) *eventWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy must not buffer events
	w.WriteHeader(http.StatusOK)
	return &eventWriter{w: w, rc: http.NewResponseController(w)}
}

// write sends b and flushes it; false when the client is gone.
func (sw *eventWriter) write(b []byte) bool {
	// Each write gets its own deadline: a stream lives as long as its
	// client reads, and a client that stopped reading is dropped.
	_ = sw.rc.SetWriteDeadline(time.Now().Add(streamWriteGrace))
	if _, err := sw.w.Write(b); err != nil {
		return false
	}
	return sw.rc.Flush() == nil
}

// writeError ends a stream with an error event whose data is the JSON
// error body a plain request would have had.
func (sw *eventWriter) writeError(err error) {
	rec := &errorRecorder{header: http.Header{}}
	writeError(rec, err)
	sw.write([]byte("event: error\ndata: " + strings.TrimSpace(rec.body.String()) + "\n\n"))
}

// transient says a read failed for a moment (the database blinked): the
// stream stays and reads again on its next tick.
func transient(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// streamEvents reads the view every interval and sends it when it changed
// (last is what was sent), a ping comment when nothing was sent for a ping
// interval, and checks the key is still valid; it returns when the client
// goes, the node drains, the key is revoked or the view is gone.
func (a *API) streamEvents(ctx context.Context, r *http.Request, sw *eventWriter, view streamView, last []byte) {
	clk := a.e.Clock()
	tick := clk.NewTicker(a.streams.interval)
	defer tick.Stop()
	ping := clk.NewTicker(a.streams.ping)
	defer ping.Stop()
	keyCheck := clk.NewTicker(min(streamKeyCheck, 10*a.streams.interval))
	defer keyCheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.draining:
			// Shutting down: end the stream so Shutdown need not wait for
			// it; the page reconnects to another node or when this one is
			// back.
			return
		case <-ping.C():
			if !sw.write([]byte(": ping\n\n")) {
				return
			}
		case <-keyCheck.C():
			// The key may have been revoked since the stream opened.
			if _, err := a.authenticate(r, producer); err != nil {
				if ctx.Err() != nil {
					return
				}
				if transient(err) {
					continue
				}
				sw.writeError(err)
				return
			}
		case <-tick.C():
			event, data, same, err := view(ctx, false)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if transient(err) {
					continue // keep the stream, read again next tick
				}
				// The view is gone (a pruned job): say why and end; the
				// client's reconnect then gets the plain error.
				sw.writeError(err)
				return
			}
			if bytes.Equal(same, last) {
				continue
			}
			last = same
			if !sw.write(eventBytes(event, data)) {
				return
			}
			ping.Reset(a.streams.ping)
		}
	}
}

// eventBytes is one server-sent event with JSON data (one line: JSON
// text has no raw newlines).
func eventBytes(event string, data any) []byte {
	var b bytes.Buffer
	b.WriteString("event: " + event + "\ndata: ")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(data) // wire types always encode
	b.WriteString("\n")
	return b.Bytes()
}

// errorRecorder captures writeError's body for an error event.
type errorRecorder struct {
	header http.Header
	body   bytes.Buffer
}

func (e *errorRecorder) Header() http.Header         { return e.header }
func (e *errorRecorder) Write(b []byte) (int, error) { return e.body.Write(b) }
func (e *errorRecorder) WriteHeader(int)             {}

// streamViewOf checks the query and returns the view to stream.
func (a *API) streamViewOf(r *http.Request, p *engine.Principal) (streamView, error) {
	sq, rest, err := parseStreamQuery(r.URL.Query())
	if err != nil {
		return nil, err
	}
	switch {
	case sq.Job != "" && sq.View != "":
		return nil, field.New("view", strconv.Quote(sq.View), "give either job or view, not both")
	case sq.Job != "":
		if len(rest) > 0 {
			return nil, field.New(firstKey(rest), field.Unknown, "a job stream takes only job")
		}
		id, err := strconv.ParseInt(sq.Job, 10, 64)
		if err != nil || id <= 0 {
			return nil, field.New("job", strconv.Quote(sq.Job), "must be a job id, a positive integer")
		}
		return a.jobStreamView(p, id), nil
	case sq.View == "overview":
		if len(rest) > 0 {
			return nil, field.New(firstKey(rest), field.Unknown, "the overview stream takes only view")
		}
		return a.overviewStreamView(r, p), nil
	case sq.View == "jobs":
		return a.jobsStreamView(r, p, rest)
	case sq.View == "":
		return nil, field.New("job", field.Missing, "give job=ID, view=overview or view=jobs")
	default:
		return nil, field.New("view", strconv.Quote(sq.View), "must be overview or jobs")
	}
}

// parseStreamQuery reads job and view (each at most once, in the text
// rule) and returns the other parameters, a jobs list's filters.
func parseStreamQuery(q url.Values) (sq wire.StreamQuery, rest url.Values, err error) {
	rest = url.Values{}
	var errs field.Errors
	for k, v := range q {
		switch k {
		case "job", "view":
			if len(v) > 1 {
				errs.Add(k, field.Repeated, "give each query parameter once")
			}
		default:
			rest[k] = v
		}
	}
	sq.Job, sq.View = q.Get("job"), q.Get("view")
	for _, k := range []string{"job", "view"} {
		if badText(q.Get(k)) {
			errs.Add(k, showText(q.Get(k)), textAllowed)
		}
	}
	return sq, rest, errs.Err()
}

// jobStreamView streams one job as its page shows it.
func (a *API) jobStreamView(p *engine.Principal, id int64) streamView {
	return func(ctx context.Context, _ bool) (string, any, []byte, error) {
		j, as, hold, err := a.e.Job(ctx, p, id)
		if err != nil {
			return "", nil, nil, err
		}
		v := jobView(j, as, hold, true)
		b, err := json.Marshal(v)
		return "job", v, b, err
	}
}

// overviewStreamView streams the project's overview, one read per
// interval shared by the streams of the project that saw the same writes.
func (a *API) overviewStreamView(r *http.Request, p *engine.Principal) streamView {
	return func(ctx context.Context, _ bool) (string, any, []byte, error) {
		writes, err := a.e.Writes(ctx, p)
		if err != nil {
			return "", nil, nil, err
		}
		return a.streams.sharedOverview(p.ProjectID, writes, func() (string, any, []byte, error) {
			o, err := a.overview(&call[none]{r: r.WithContext(ctx), p: p})
			if err != nil {
				return "", nil, nil, err
			}
			// The server's time changes every read; the rest is the view.
			now := o.Now
			o.Now = ""
			b, err := json.Marshal(o)
			o.Now = now
			return "overview", o, b, err
		})
	}
}

// jobsStreamView streams a jobs list under the filters in rest.
func (a *API) jobsStreamView(r *http.Request, p *engine.Principal, rest url.Values) (streamView, error) {
	var jq wire.JobQuery
	if err := decodeQueryInto(rest, &jq); err != nil {
		return nil, err
	}
	if jq.Cursor != "" {
		return nil, field.New("cursor", strconv.Quote(jq.Cursor), "a jobs stream watches the first page; leave cursor out")
	}
	f, err := a.jobFilter(r.Context(), p, jq)
	if err != nil {
		return nil, err
	}
	if countedByCounters(f) {
		return func(ctx context.Context, first bool) (string, any, []byte, error) {
			return a.jobsStreamRead(ctx, p, f, first)
		}, nil
	}
	// Counting such a filter reads the jobs it selects (a search reads
	// every job): such a stream re-reads every slowStreamEvery intervals,
	// not every interval.
	var (
		tick      int
		lastEvent string
		lastData  any
		lastSame  []byte
	)
	return func(ctx context.Context, first bool) (string, any, []byte, error) {
		if !first {
			if tick++; tick%slowStreamEvery != 0 {
				return lastEvent, lastData, lastSame, nil
			}
		}
		ev, data, same, err := a.jobsStreamRead(ctx, p, f, first)
		if err == nil {
			lastEvent, lastData, lastSame = ev, data, same
		}
		return ev, data, same, err
	}, nil
}

// jobsStreamRead reads what a jobs list shows: its first page (ids, states,
// attempts, update times) and the counts per state under the filters other
// than state.
func (a *API) jobsStreamRead(ctx context.Context, p *engine.Principal, f store.JobFilter, first bool) (string, any, []byte, error) {
	jobs, err := a.e.Jobs(ctx, p, f)
	if err != nil {
		return "", nil, nil, err
	}
	out := wire.StreamJobs{Changed: !first, Counts: map[wire.JobState]int64{}}
	if countedByCounters(f) {
		// Only endpoint and tool: the counters kept with every change of a
		// job (GET /v1/jobs/counts), one read instead of a count per state.
		counts, err := a.e.JobCounts(ctx, p, f)
		if err != nil {
			return "", nil, nil, err
		}
		for _, s := range wire.JobStates() {
			out.Counts[s] = counts[s]
			out.Total += counts[s]
		}
	} else {
		cf := f
		cf.AfterID, cf.Limit, cf.States = 0, 0, nil
		counts, capped, err := a.e.CountJobsByState(ctx, p, cf)
		if err != nil {
			return "", nil, nil, err
		}
		for _, s := range wire.JobStates() {
			out.Counts[s] = counts[s]
			out.Total += counts[s]
		}
		out.Capped = capped
	}
	var b bytes.Buffer
	for _, j := range jobs {
		b.WriteString(strconv.FormatInt(j.ID, 10) + " " + string(j.State) + " " + strconv.FormatInt(j.Attempt, 10) + " " + strconv.FormatInt(j.UpdatedAt, 10) + "\n")
	}
	cb, _ := json.Marshal(out.Counts)
	b.Write(cb)
	b.WriteString(strconv.FormatBool(out.Capped))
	return "jobs", out, b.Bytes(), nil
}

// countedByCounters reports whether the counts of f's jobs per state come
// from the counters kept with every change of a job (filters of endpoint and
// tool only) rather than from counting the jobs.
func countedByCounters(f store.JobFilter) bool {
	return f.RunID == 0 && f.FlowKey == "" && f.CreatedAfter == 0 && f.CreatedBefore == 0 && f.Q == ""
}

func firstKey(v url.Values) string {
	return slices.Sorted(maps.Keys(v))[0]
}
