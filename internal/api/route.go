package api

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getratchet/ratchet/field"
	"github.com/getratchet/ratchet/internal/engine"
	"github.com/getratchet/ratchet/wire"
)

// call is one request to a typed handler: the authenticated key, the decoded
// request and, for routes that parse their own body, its bytes.
type call[Req any] struct {
	r      *http.Request
	p      *engine.Principal
	in     Req
	body   []byte
	status int // the success status; the route's unless the handler says otherwise
}

func (c *call[Req]) ctx() context.Context { return c.r.Context() }

// none is the request or response of a route without a body.
type none struct{}

// decoding says how a route reads its request.
type decoding int

const (
	decodeJSON  decoding = iota // strictly into the request type
	decodeNone                  // no body: a non-empty one is an error
	decodeRaw                   // the handler parses call.body itself, for field-level messages; the request type documents it
	decodeQuery                 // the URL query into the request type's string fields
	decodeOwn                   // the body is read into call.body unchecked: a route that writes its own answer reads its request itself
)

// option adjusts a route.
type option func(*Route, *decoding)

// rawBody makes the handler parse the body: its parser names every bad field
// of a policy document with the policy's own rules.
func rawBody() option { return func(_ *Route, d *decoding) { *d = decodeRaw } }

// inQuery reads the request from the URL query.
func inQuery() option { return func(_ *Route, d *decoding) { *d = decodeQuery } }

// idempotencyHeader documents the Idempotency-Key header.
func idempotencyHeader() option { return func(r *Route, _ *decoding) { r.idempotencyHeader = true } }

// also documents another success status with the same body.
func also(status int, why string) option {
	return func(r *Route, _ *decoding) { r.alsoStatus = append(r.alsoStatus, altStatus{status, why}) }
}

// route builds a typed route: the one wrapper that authenticates, decodes
// the request into Req, runs the handler and writes its *Resp with the
// route's status (204 when Resp is none), or maps its error.
func route[Req, Resp any](a *API, method, path, summary string, scopes []wire.Scope, status int, h func(c *call[Req]) (*Resp, error), opts ...option) Route {
	r := Route{Method: method, Path: path, Summary: summary, Scopes: scopes, Status: status}
	reqType, respType := reflect.TypeFor[Req](), reflect.TypeFor[Resp]()
	mode := decodeJSON
	if reqType == reflect.TypeFor[none]() {
		mode = decodeNone
	}
	for _, o := range opts {
		o(&r, &mode)
	}
	switch mode {
	case decodeJSON, decodeRaw:
		r.request = reqType
	case decodeQuery:
		r.query = reqType
	}
	if respType != reflect.TypeFor[none]() {
		r.response = respType
	}
	r.handler = func(w http.ResponseWriter, req *http.Request) {
		c := &call[Req]{r: req, status: status}
		if err := admit(a, w, c, path, scopes, mode); err != nil {
			a.fail(w, req, err)
			return
		}
		resp, err := h(c)
		switch {
		case err != nil:
			a.fail(w, req, err)
		case r.response == nil:
			w.WriteHeader(http.StatusNoContent)
		default:
			writeJSON(w, c.status, resp)
		}
	}
	return r
}

// Two routes of the table are not typed routes, because each writes its
// own answer:
//
//   - GET /v1/stream answers text/event-stream for as long as its client
//     reads, one event at a time; only its first error (an unknown job, a
//     bad filter) is a JSON error, before the stream starts. Its query is
//     open-ended (a jobs list's filters), so it reads the query itself
//     (streamViewOf).
//   - POST /api/simulate checks the Content-Type before anything else (no
//     plain HTML form may start a sweep), lets simulate.ParseConfig name the
//     config's bad fields, and answers with a result kept encoded in its
//     cache (the same bytes on a hit) and a Server-Timing header.
//
// Both still get what the wrapper guarantees, through the same functions:
// admit (the key and its scopes, the body read within MaxBodyBytes and the
// body timeout, the path's text) and a.fail, the one error mapping.

// admit is the start of every route: it authenticates the key for scopes
// (none: no key), reads and decodes the request as mode says into c, and
// checks the text of the path's parameters.
func admit[Req any](a *API, w http.ResponseWriter, c *call[Req], path string, scopes []wire.Scope, mode decoding) error {
	if len(scopes) > 0 {
		p, err := a.authenticate(c.r, scopes)
		if err != nil {
			return err
		}
		c.p = p
	}
	if err := c.decode(w, mode, a.bodyTimeout); err != nil {
		return err
	}
	return checkPathText(c.r, path)
}

// authenticate resolves the bearer key and checks its scope.
func (a *API) authenticate(r *http.Request, scopes []wire.Scope) (*engine.Principal, error) {
	secret, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return nil, engine.ErrUnauthenticated
	}
	p, err := a.e.Authenticate(r.Context(), strings.TrimSpace(secret))
	if err != nil {
		return nil, err
	}
	if err := p.Require(scopes...); err != nil {
		return nil, err
	}
	return p, nil
}

func (c *call[Req]) decode(w http.ResponseWriter, mode decoding, timeout time.Duration) error {
	switch mode {
	case decodeQuery:
		return decodeQueryInto(c.r.URL.Query(), &c.in)
	case decodeNone:
		body, err := readBody(w, c.r, timeout)
		if err != nil {
			return err
		}
		if len(strings.TrimSpace(string(body))) > 0 {
			return field.New("body", "a body of "+strconv.Itoa(len(body))+" bytes", "must be empty: this route takes no body")
		}
		return nil
	}
	body, err := readBody(w, c.r, timeout)
	if err != nil {
		return err
	}
	c.body = body
	if mode == decodeOwn {
		return nil
	}
	if mode == decodeRaw {
		// Bad text in a member is named first; what is left (invalid
		// bytes in free text or a schema) is the body's.
		if json.Valid(body) {
			var errs field.Errors
			if rawTextErrors(body, reflect.TypeFor[Req](), &errs); len(errs) > 0 {
				return errs
			}
		}
		if !utf8.Valid(body) {
			return field.New("body", "JSON with invalid UTF-8", "must be valid UTF-8 JSON")
		}
		return nil
	}
	if err := decodeBytes(body, &c.in); err != nil {
		return err
	}
	var errs field.Errors
	checkText(reflect.ValueOf(&c.in).Elem(), "", false, &errs)
	rawTextErrors(body, reflect.TypeFor[Req](), &errs)
	return errs.Err()
}

// decodeQueryInto sets the string fields of the struct v points to from the
// query parameters named by their json tags. An unknown or repeated
// parameter is an error naming it.
func decodeQueryInto(q url.Values, v any) error {
	rv := reflect.ValueOf(v).Elem()
	t := rv.Type()
	known := map[string]int{}
	var names []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		known[name] = i
		names = append(names, name)
	}
	var errs field.Errors
	for _, k := range slices.Sorted(maps.Keys(q)) {
		i, ok := known[k]
		switch {
		case !ok:
			errs.Add(k, field.Unknown, "query parameters are "+strings.Join(names, ", "))
		case len(q[k]) > 1:
			errs.Add(k, field.Repeated, "give each query parameter once")
		case badText(q.Get(k)):
			errs.Add(k, showText(q.Get(k)), textAllowed)
		default:
			rv.Field(i).SetString(q.Get(k))
		}
	}
	return errs.Err()
}
