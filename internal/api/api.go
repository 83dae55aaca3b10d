// Package api is Ratchet's HTTP API: JSON over HTTP under /v1, bearer API
// keys, one error shape and one place that maps errors to status codes. It
// only wraps the engine.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getratchet/ratchet/backoff"
	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/internal/store"
	"github.com/getratchet/ratchet/internal/tracing"
	"github.com/getratchet/ratchet/wire"
)

// MaxBodyBytes bounds every request body (a batch of 1000 jobs with small
// payloads fits comfortably; a single payload is limited to 256 KiB).
const MaxBodyBytes = 8 << 20

// maxBodyText is MaxBodyBytes for people (MaxBodyBytes is 8 << 20).
var maxBodyText = "8 MiB (" + strconv.Itoa(MaxBodyBytes) + " bytes)"

// BodyTimeout is how long a request body may take to arrive.
const BodyTimeout = 10 * time.Second

// API serves /v1.
type API struct {
	e       *engine.Engine
	log     *slog.Logger
	metrics *Metrics
	routes  []Route
	// draining is closed when the server stops taking claims.
	draining <-chan struct{}
	// bodyTimeout is how long a request body may take to arrive.
	bodyTimeout time.Duration
	// streams counts the open GET /v1/stream streams (stream.go).
	streams *streams
	// tracer makes the spans of enqueues, claims and reports; nil: off.
	tracer *tracing.Tracer
}

// SetBodyTimeout changes how long a request body may take to arrive
// (BodyTimeout by default); call it before serving.
func (a *API) SetBodyTimeout(d time.Duration) { a.bodyTimeout = d }

// Route is one operation: its handler and its OpenAPI entry come from the
// same table, and its request and response types are the wire types the
// handler decodes and returns, so the document cannot drift from the mux.
type Route struct {
	Method, Path string
	Summary      string
	Scopes       []wire.Scope // empty: no key needed
	Status       int          // success status

	request, response reflect.Type // nil for none
	query             reflect.Type // the query parameters' struct, nil for none
	idempotencyHeader bool
	stream            bool // answers text/event-stream (GET /v1/stream)
	alsoStatus        []altStatus
	handler           http.HandlerFunc
}

// altStatus is another success status of a route, with the same body.
type altStatus struct {
	status int
	why    string
}

// RequestType is the wire type of the route's request body (nil for none).
func (r Route) RequestType() reflect.Type { return r.request }

// ResponseType is the wire type of the route's response body (nil for
// none).
func (r Route) ResponseType() reflect.Type { return r.response }

// New builds the API. draining, when closed, makes claims return no jobs at
// once (graceful shutdown).
func New(e *engine.Engine, log *slog.Logger, m *Metrics, draining <-chan struct{}) *API {
	a := &API{e: e, log: log, metrics: m, draining: draining, bodyTimeout: BodyTimeout, streams: newStreams()}
	if e != nil { // nil only to generate the OpenAPI document
		a.streams.now = e.Clock().Now
	}
	a.routes = a.table()
	if m != nil {
		m.observeStreams(a.streams)
	}
	if m != nil && e != nil {
		m.observeSchedules(e.Store(), e.Clock().Now)
	}
	return a
}

// Routes returns the route table (for the OpenAPI document and its test).
func (a *API) Routes() []Route { return a.routes }

// Register mounts every route on mux.
func (a *API) Register(mux *http.ServeMux) {
	for _, r := range a.routes {
		h := r.handler
		route := r
		mux.HandleFunc(r.Method+" "+r.Path, func(w http.ResponseWriter, req *http.Request) {
			start := time.Now()
			sw := NewStatusWriter(w)
			defer func() {
				if p := recover(); p != nil {
					a.log.Error("handler panic", "route", route.Path, "panic", p)
					if !sw.wrote {
						writeError(sw, fmt.Errorf("internal error"))
					}
				}
				// A stream's duration is how long a page stayed open, not a
				// latency: it stays out of the request histogram.
				if a.metrics != nil && !route.stream {
					a.metrics.request(route.Method+" "+route.Path, sw.Status, time.Since(start))
				}
			}()
			h(sw, req)
		})
	}
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		if allow := a.methodsFor(r.URL.Path); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeJSON(w, http.StatusMethodNotAllowed, wire.ErrorBody{Error: wire.ErrorDetail{Code: "method_not_allowed",
				Message: r.Method + " is not allowed on " + r.URL.Path + "; allowed: " + strings.Join(allow, ", ")}})
			return
		}
		writeJSON(w, http.StatusNotFound, wire.ErrorBody{Error: wire.ErrorDetail{Code: "not_found", Message: "no such route: " + r.Method + " " + r.URL.Path + "; see /openapi.json"}})
	})
}

// methodsFor lists the methods the route table serves at path (for 405's
// Allow header); none when no route has the path.
func (a *API) methodsFor(path string) []string {
	var out []string
	segs := strings.Split(path, "/")
	for _, r := range a.routes {
		tmpl := strings.Split(r.Path, "/")
		if len(tmpl) != len(segs) {
			continue
		}
		match := true
		for i, t := range tmpl {
			if !(strings.HasPrefix(t, "{") && segs[i] != "") && t != segs[i] {
				match = false
				break
			}
		}
		if match && !slices.Contains(out, r.Method) {
			out = append(out, r.Method)
		}
	}
	slices.Sort(out)
	return out
}

// StatusWriter records the status and the body size of an answer as it is
// written: the routes' metrics and recovery read it here, and the server's
// access log (internal/server) wraps every request in one too.
type StatusWriter struct {
	http.ResponseWriter
	Status int  // the status written; 200 until one is
	Bytes  int  // the body bytes written
	wrote  bool // a header or body byte went out: too late for an error answer
}

// NewStatusWriter wraps w.
func NewStatusWriter(w http.ResponseWriter) *StatusWriter {
	return &StatusWriter{ResponseWriter: w, Status: http.StatusOK}
}

// WriteHeader records the first status.
func (s *StatusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.Status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

// Write counts the body bytes.
func (s *StatusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	n, err := s.ResponseWriter.Write(b)
	s.Bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (the body's
// read deadline, flushes) through the wrapper.
func (s *StatusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush sends what is buffered, for a caller that asks for http.Flusher.
func (s *StatusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// --- errors ---

// writeError is the one place errors become status codes. Internal detail is
// logged by the caller, never echoed.
func writeError(w http.ResponseWriter, err error) {
	var ee *engine.Error
	var te *transportError
	be, isField := field.As(err)
	status, d := http.StatusInternalServerError, wire.ErrorDetail{Code: "internal", Message: "internal error"}
	switch {
	case errors.As(err, &ee):
		d.Message, d.Fields = ee.Message, ee.Fields
		if ep, ok := ee.Current.(*store.Endpoint); ok {
			v := endpointView(ep, time.Now().UnixMilli()) // a conflict's current row: the learned limit's lapse by the machine's clock
			d.Current = &v
		}
		switch ee.Kind {
		case engine.KindInvalid:
			status, d.Code = http.StatusBadRequest, "invalid_request"
			if len(ee.Fields) > 0 {
				d.Message = invalidMessage(ee.Fields)
			}
		case engine.KindUnauthenticated:
			status, d.Code = http.StatusUnauthorized, "unauthenticated"
		case engine.KindForbidden:
			status, d.Code = http.StatusForbidden, "forbidden"
		case engine.KindNotFound:
			status, d.Code = http.StatusNotFound, "not_found"
		case engine.KindConflict:
			status, d.Code = http.StatusConflict, "conflict"
		case engine.KindUnavailable:
			status, d.Code = http.StatusServiceUnavailable, "unavailable"
		}
	case isField:
		status, d.Code = http.StatusBadRequest, "invalid_request"
		d.Message, d.Fields = invalidMessage(be), be
	case errors.As(err, &te):
		status, d.Code, d.Message, d.Fields = te.status, te.code, te.message, te.fields
	case errors.Is(err, store.ErrStorageFull):
		status, d.Code, d.Message = http.StatusServiceUnavailable, "storage_full",
			"the database cannot write: its storage is full, so nothing of this request was stored; an operator must free disk space on the database's volume, then retry"
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		status, d.Code, d.Message = http.StatusServiceUnavailable, "unavailable", "the database is unavailable; try again"
	}
	if status == http.StatusServiceUnavailable {
		retry := "1"
		if d.Code == "storage_full" {
			retry = strconv.Itoa(StorageFullRetryAfter) // space comes back when a person frees it, not in a second
		}
		w.Header().Set("Retry-After", retry)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ratchet"`)
	}
	d.Fields, d.FieldsOmitted = boundFields(d.Fields)
	writeJSON(w, status, wire.ErrorBody{Error: d})
}

// StorageFullRetryAfter is the Retry-After, in seconds, of a storage_full
// answer.
const StorageFullRetryAfter = 30

// An error body is bounded whatever the input: at most maxErrorFields
// fields (and how many more there were), each value cut to maxValueRunes
// characters, and a message naming at most the first three.
const (
	maxErrorFields = 20
	maxValueRunes  = 200
	messageFields  = 3
)

func boundFields(fs field.Errors) (field.Errors, int) {
	omitted := 0
	if len(fs) > maxErrorFields {
		fs, omitted = fs[:maxErrorFields], len(fs)-maxErrorFields
	}
	out := make(field.Errors, len(fs))
	for i, f := range fs {
		c := *f
		c.Value = clip(c.Value, maxValueRunes)
		c.Allowed = clip(c.Allowed, 4*maxValueRunes)
		out[i] = &c
	}
	return out, omitted
}

func invalidMessage(fs field.Errors) string {
	shown, _ := boundFields(fs)
	if len(shown) > messageFields {
		shown = shown[:messageFields]
	}
	msg := "invalid request: " + strings.ReplaceAll(shown.Error(), "\n", "; ")
	if more := len(fs) - len(shown); more > 0 {
		msg += "; and " + strconv.Itoa(more) + " more"
	}
	return msg
}

// clip cuts s to at most n characters, on a character boundary, marking the
// cut; invalid UTF-8 is replaced so the body is always valid JSON text.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// transportError is a failure to read the request itself, with its own
// status (408 for a body that arrives too slowly).
type transportError struct {
	status        int
	code, message string
	fields        field.Errors // what was refused, when a field can say it
}

func (e *transportError) Error() string { return e.message }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// --- requests ---

// fail logs unexpected errors and writes the mapped response.
// statusClientClosed answers a request whose client went away before the
// answer (nginx's 499): nobody reads it, and it is no server error.
const statusClientClosed = 499

func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	var ee *engine.Error
	if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
		// The transaction was rolled back: nothing happened.
		a.log.Debug("client went away", "method", r.Method, "path", r.URL.Path, "err", err)
		writeJSON(w, statusClientClosed, wire.ErrorBody{Error: wire.ErrorDetail{Code: "client_closed", Message: "the client closed the request; nothing was changed"}})
		return
	}
	if _, isField := field.As(err); !errors.As(err, &ee) && !isField {
		a.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, err)
}

// readBody reads a bounded body.
func readBody(w http.ResponseWriter, r *http.Request, timeout time.Duration) ([]byte, error) {
	// A body must arrive within BodyTimeout: a client that trickles one
	// would otherwise hold a connection (and a file handle) for as long as
	// it likes. The deadline is lifted after, so a long poll's answer is not
	// cut.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(timeout))
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		// The deadline stays: the server must not wait for the rest of
		// this body to reuse the connection; it closes it instead.
		w.Header().Set("Connection", "close")
		var mbe *http.MaxBytesError
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, &transportError{status: http.StatusRequestTimeout, code: "request_timeout",
				message: "the request body did not arrive within " + timeout.String() + "; send it at once"}
		}
		if errors.As(err, &mbe) {
			return nil, &transportError{status: http.StatusRequestEntityTooLarge, code: "request_too_large",
				message: "the request body is larger than " + maxBodyText + ", the most a request may carry; send smaller payloads or split a batch",
				fields:  field.Errors{{Field: "body", Value: "more than " + strconv.Itoa(MaxBodyBytes) + " bytes", Allowed: "must be at most " + maxBodyText}}}
		}
		return nil, field.Errors{{Field: "body", Value: "unreadable", Allowed: "must be a complete JSON document"}}
	}
	_ = rc.SetReadDeadline(time.Time{})
	return body, nil
}

// decodeBytes reads a JSON object strictly into v: unknown fields, wrong
// types, trailing data and malformed JSON are errors that name the field.
func decodeBytes(body []byte, v any) error {
	if len(strings.TrimSpace(string(body))) == 0 {
		return field.Errors{{Field: "body", Value: "empty", Allowed: "must be a JSON object"}}
	}
	if _, err := backoff.ReadObject(body, "body"); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonFieldError(err)
	}
	return nil
}

func jsonFieldError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		name := te.Field
		if name == "" {
			name = "body"
		}
		return field.Errors{{Field: name, Value: "a JSON " + te.Value, Allowed: "must be " + typeName(te.Type.String())}}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return field.Errors{{Field: strings.Trim(f, `"`), Value: field.Unknown, Allowed: "see the request schema in /openapi.json"}}
	}
	return field.Errors{{Field: "body", Value: "malformed JSON (" + strings.TrimPrefix(msg, "json: ") + ")", Allowed: "must be a JSON object"}}
}

func typeName(t string) string {
	switch {
	case strings.Contains(t, "int"):
		return "an integer"
	case strings.Contains(t, "float"):
		return "a number"
	case t == "string" || t == "*string":
		return "a string"
	case strings.Contains(t, "bool"):
		return "true or false"
	case strings.HasPrefix(t, "[]") || strings.HasPrefix(t, "*[]"):
		return "an array"
	case strings.Contains(t, "map"):
		return "an object"
	case strings.Contains(t, "RawMessage"):
		return "JSON"
	}
	return "of type " + t
}

func pathInt(r *http.Request, name string) (int64, error) {
	v, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || v <= 0 {
		return 0, &engine.Error{Kind: engine.KindNotFound, Message: fmt.Sprintf("%s %q not found", name, r.PathValue(name))}
	}
	return v, nil
}
