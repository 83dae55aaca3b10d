package api

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/getratchet/ratchet/internal/engine"
)

type overviewEndpoint struct {
	EndpointView
	Running        int64            `json:"running"`
	ClaimsInWindow int64            `json:"claimsInWindow"`
	Scheduled      int64            `json:"scheduled"`
	Due            int64            `json:"due"`
	HeldBy         *engine.Hold     `json:"heldBy"`
	Outcomes5m     map[string]int64 `json:"outcomes5m"`
	Outcomes1h     map[string]int64 `json:"outcomes1h"`
}

func (a *API) overview(w http.ResponseWriter, r *http.Request, p *engine.Principal) (any, error) {
	ovs, err := a.e.Overview(r.Context(), p)
	if err != nil {
		return nil, err
	}
	out := []overviewEndpoint{}
	for _, o := range ovs {
		v := overviewEndpoint{EndpointView: endpointView(o.Endpoint), Running: o.Running, ClaimsInWindow: o.ClaimsInWindow, Scheduled: o.Scheduled,
			Due: o.Due, Outcomes5m: o.Outcomes5m, Outcomes1h: o.Outcomes1h}
		if o.HeldBy != "" {
			h := &engine.Hold{Gate: o.HeldBy, Detail: o.HeldDetail}
			if o.HeldUntil > 0 {
				h.Until = timeMs(o.HeldUntil)
			}
			v.HeldBy = h
		}
		out = append(out, v)
	}
	return map[string]any{"now": ft(a.e.Clock().Now().UnixMilli()), "endpoints": out}, nil
}

func sortedQueryKeys(q url.Values) []string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
