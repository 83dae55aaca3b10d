package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzHistoryQuery sends arbitrary hours and endpoint values to GET
// /v1/history: never a 5xx; a 200 exactly when hours is empty or an
// integer from 1 through 48 and the endpoint is empty or exists; a 400
// names the field.
func FuzzHistoryQuery(f *testing.F) {
	fx := newFixture(f)
	for _, s := range []string{"", "1", "48", "0", "49", "-1", "six", "6.5", " 6", "99999999999999999999", "\x00"} {
		f.Add(s, "")
	}
	f.Add("6", "stripe")
	f.Add("6", "nope")
	f.Fuzz(func(t *testing.T, hours, endpoint string) {
		q := url.Values{}
		if hours != "" {
			q.Set("hours", hours)
		}
		if endpoint != "" {
			q.Set("endpoint", endpoint)
		}
		req, err := http.NewRequest("GET", fx.srv.URL+"/v1/history?"+q.Encode(), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := fx.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct {
			Error struct {
				Fields []struct{ Field string } `json:"fields"`
			} `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&body)
		n, perr := strconv.Atoi(hours)
		validHours := hours == "" || (perr == nil && n >= 1 && n <= 48)
		named := func(name string) bool {
			for _, f := range body.Error.Fields {
				if f.Field == name {
					return true
				}
			}
			return false
		}
		switch {
		case resp.StatusCode >= 500:
			t.Fatalf("hours %q endpoint %q: %d", hours, endpoint, resp.StatusCode)
		case !clean(endpoint) || !clean(hours):
			// The query decoder refuses text that is not UTF-8, or holds
			// control characters, first.
			if resp.StatusCode != 400 || !(named("endpoint") || named("hours")) {
				t.Fatalf("hours %q endpoint %q: %d %+v, want 400 naming a field", hours, endpoint, resp.StatusCode, body)
			}
		case !validHours && (resp.StatusCode != 400 || len(body.Error.Fields) != 1 || body.Error.Fields[0].Field != "hours"):
			t.Fatalf("hours %q: %d %+v, want 400 naming hours", hours, resp.StatusCode, body)
		case validHours && (endpoint == "" || endpoint == "stripe") && resp.StatusCode != 200:
			t.Fatalf("hours %q endpoint %q: %d, want 200", hours, endpoint, resp.StatusCode)
		case validHours && resp.StatusCode != 200 && resp.StatusCode != 404:
			t.Fatalf("hours %q endpoint %q: %d, want 200 or 404", hours, endpoint, resp.StatusCode)
		}
	})
}

func clean(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}
