package docs

import (
	"bytes"
	"encoding/json"
	"html/template"
	"sort"
	"strings"
)

// apiParam is a parameter of a route on the API page.
type apiParam struct{ Name, In, Type, Description string }

// apiResponse is a response of a route on the API page.
type apiResponse struct{ Status, Description, Schema string }

// apiOp is one route on the API page.
type apiOp struct {
	Method, Path, ID, Summary, Description, Request string
	Params                                          []apiParam
	Responses                                       []apiResponse
}

// apiProp is a row of a schema's table: a property, its type and notes.
type apiProp struct{ Name, Type, Notes string }

// apiSchema is a schema of the document as a table of its properties.
type apiSchema struct {
	Name  string
	Props []apiProp
}

// apiResource is the routes of one resource (the first segment of a /v1
// path: endpoints, jobs, …) on the API page.
type apiResource struct {
	Key, Name string
	Ops       []apiOp
}

// resourceOrder is the order of the API page's resources: what a reader
// sets up first (endpoints, tools), then jobs and what runs them, then
// the rest by name; the operational routes outside /v1 come last.
var resourceOrder = []string{"endpoints", "tools", "jobs", "claims", "reports", "runs", "schedules", "keys"}

// resourceOf is the resource of a path: its first segment under /v1, or
// "operations" for the paths outside /v1 (/healthz, /openapi.json, …).
func resourceOf(path string) string {
	rest, ok := strings.CutPrefix(path, "/v1/")
	if !ok {
		return "operations"
	}
	first, _, _ := strings.Cut(rest, "/")
	return first
}

func resourceRank(key string) int {
	for i, k := range resourceOrder {
		if k == key {
			return i
		}
	}
	if key == "operations" {
		return len(resourceOrder) + 2
	}
	return len(resourceOrder) + 1
}

// resourceName is the heading of a resource: "Jobs", "Operations".
func resourceName(key string) string {
	if key == "" {
		return key
	}
	return strings.ToUpper(key[:1]) + key[1:]
}

// renderAPI renders the OpenAPI document as one HTML page: the routes by
// resource (endpoints, tools, jobs, … then the operational routes), each
// with its keys, parameters, bodies and responses, then every schema as a
// table of its properties.
func renderAPI(doc map[string]any) (template.HTML, error) {
	var data struct {
		Title, Version, Description string
		Resources                   []apiResource
		Schemas                     []apiSchema
	}
	info, _ := doc["info"].(map[string]any)
	data.Title, _ = info["title"].(string)
	data.Version, _ = info["version"].(string)
	data.Description, _ = info["description"].(string)
	paths, _ := doc["paths"].(map[string]any)
	byRes := map[string]*apiResource{}
	for _, path := range sortedKeys(paths) {
		item, _ := paths[path].(map[string]any)
		for _, method := range []string{"get", "post", "put", "patch", "delete"} {
			if o, ok := item[method].(map[string]any); ok {
				key := resourceOf(path)
				r := byRes[key]
				if r == nil {
					r = &apiResource{Key: key, Name: resourceName(key)}
					byRes[key] = r
				}
				r.Ops = append(r.Ops, apiOpOf(method, path, o))
			}
		}
	}
	for _, r := range byRes {
		data.Resources = append(data.Resources, *r)
	}
	sort.Slice(data.Resources, func(i, j int) bool {
		a, b := resourceRank(data.Resources[i].Key), resourceRank(data.Resources[j].Key)
		if a != b {
			return a < b
		}
		return data.Resources[i].Key < data.Resources[j].Key
	})
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	for _, name := range sortedKeys(schemas) {
		sm, _ := schemas[name].(map[string]any)
		data.Schemas = append(data.Schemas, apiSchemaOf(name, sm))
	}
	var b bytes.Buffer
	if err := apiTmpl.Execute(&b, data); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// apiOpOf reads the operation o of method on path: its id, summary and
// description, parameters, request body and responses (by status).
func apiOpOf(method, path string, o map[string]any) apiOp {
	x := apiOp{Method: strings.ToUpper(method), Path: path}
	x.ID, _ = o["operationId"].(string)
	x.Summary, _ = o["summary"].(string)
	x.Description, _ = o["description"].(string)
	ps, _ := o["parameters"].([]any)
	for _, p := range ps {
		pm, _ := p.(map[string]any)
		var y apiParam
		y.Name, _ = pm["name"].(string)
		y.In, _ = pm["in"].(string)
		y.Description, _ = pm["description"].(string)
		y.Type = typeOf(pm["schema"])
		x.Params = append(x.Params, y)
	}
	if rb, ok := o["requestBody"].(map[string]any); ok {
		x.Request = schemaRef(rb)
	}
	rs, _ := o["responses"].(map[string]any)
	for _, code := range sortedKeys(rs) {
		rm, _ := rs[code].(map[string]any)
		d, _ := rm["description"].(string)
		x.Responses = append(x.Responses, apiResponse{Status: code, Description: d, Schema: schemaRef(rm)})
	}
	return x
}

// apiSchemaOf reads the schema sm named name: each property in name order
// with its type and notes.
func apiSchemaOf(name string, sm map[string]any) apiSchema {
	s := apiSchema{Name: name}
	props, _ := sm["properties"].(map[string]any)
	required := map[string]bool{}
	if req, ok := sm["required"].([]any); ok {
		for _, r := range req {
			if n, ok := r.(string); ok {
				required[n] = true
			}
		}
	}
	for _, pn := range sortedKeys(props) {
		pm, _ := props[pn].(map[string]any)
		s.Props = append(s.Props, apiProp{Name: pn, Type: typeOf(pm), Notes: propNotes(pm, required[pn])})
	}
	return s
}

// propNotes are what a reader must know of a property besides its type:
// whether it is required, its bounds, enum and pattern, and its
// description.
func propNotes(pm map[string]any, required bool) string {
	var notes []string
	if required {
		notes = append(notes, "required")
	}
	if lo, ok := pm["minimum"]; ok {
		notes = append(notes, "minimum "+jsonText(lo))
	}
	if hi, ok := pm["maximum"]; ok {
		notes = append(notes, "maximum "+jsonText(hi))
	}
	if e, ok := pm["enum"]; ok {
		notes = append(notes, "one of "+jsonText(e))
	}
	if p, ok := pm["pattern"].(string); ok {
		notes = append(notes, "pattern "+p)
	}
	if d, ok := pm["description"].(string); ok {
		notes = append(notes, d)
	}
	return strings.Join(notes, "; ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// schemaRef names the schema of a request body or response, "" for none.
func schemaRef(m map[string]any) string {
	content, _ := m["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	return typeOf(js["schema"])
}

// typeOf describes a JSON Schema briefly: a $ref's name, a type, or an
// array of either.
func typeOf(v any) string {
	s, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	if ref, ok := s["$ref"].(string); ok {
		return ref[strings.LastIndex(ref, "/")+1:]
	}
	var t string
	switch x := s["type"].(type) {
	case string:
		t = x
	case []any:
		var parts []string
		for _, p := range x {
			if ps, ok := p.(string); ok {
				parts = append(parts, ps)
			}
		}
		t = strings.Join(parts, " or ")
	}
	if strings.HasPrefix(t, "array") {
		if it := typeOf(s["items"]); it != "" {
			return "array of " + it
		}
	}
	if t == "" {
		return "any JSON"
	}
	return t
}

var apiTmpl = template.Must(template.New("api").Parse(`<h1>API reference</h1>
<p>{{.Title}} {{.Version}}. {{.Description}} This page is rendered from the server's own OpenAPI document, <a href="/openapi.json">/openapi.json</a>. Requests and responses are JSON; send an API key as <code>Authorization: Bearer rk_…</code>. Errors have one shape, <a href="#schema-Error">Error</a>, naming every rejected field with its value and what is allowed. The <a href="/docs/workers">worker reference</a> walks through the calls in order.</p>
<h2 id="routes">Routes</h2>
<p>By resource: {{range $i, $r := .Resources}}{{if $i}} · {{end}}<a href="#resource-{{$r.Key}}">{{$r.Name}}</a>{{end}}.</p>
<table>
<thead><tr><th>Method</th><th>Path</th><th>What</th></tr></thead>
{{range .Resources}}<tbody>
<tr><th colspan="3" scope="colgroup">{{.Name}}</th></tr>
{{range .Ops}}<tr><td>{{.Method}}</td><td><a href="#{{.ID}}"><code>{{.Path}}</code></a></td><td>{{.Summary}}</td></tr>
{{end}}</tbody>
{{end}}</table>
{{range .Resources}}
<h2 id="resource-{{.Key}}" class="api-resource">{{.Name}}</h2>
{{range .Ops}}
<section class="api-op">
<h3 id="{{.ID}}"><code>{{.Method}} {{.Path}}</code></h3>
<p>{{.Summary}}.{{if .Description}} {{.Description}}{{else}} No key needed.{{end}}</p>
{{if .Params}}<table>
<thead><tr><th>Parameter</th><th>In</th><th>Type</th><th>Description</th></tr></thead>
<tbody>{{range .Params}}<tr><td><code>{{.Name}}</code></td><td>{{.In}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>
{{end}}</tbody>
</table>{{end}}
{{if .Request}}<p>Request body: <a href="#schema-{{.Request}}">{{.Request}}</a></p>{{end}}
<table>
<thead><tr><th>Status</th><th>Meaning</th><th>Body</th></tr></thead>
<tbody>{{range .Responses}}<tr><td>{{.Status}}</td><td>{{.Description}}</td><td>{{if .Schema}}<a href="#schema-{{.Schema}}">{{.Schema}}</a>{{end}}</td></tr>
{{end}}</tbody>
</table>
</section>
{{end}}{{end}}
<h2 id="schemas">Schemas</h2>
{{range .Schemas}}
<h3 id="schema-{{.Name}}">{{.Name}}</h3>
{{if .Props}}<table>
<thead><tr><th>Field</th><th>Type</th><th>Notes</th></tr></thead>
<tbody>{{range .Props}}<tr><td><code>{{.Name}}</code></td><td>{{.Type}}</td><td>{{.Notes}}</td></tr>
{{end}}</tbody>
</table>{{else}}<p>A JSON object; see the route's summary.</p>{{end}}
{{end}}`))
