// Package web serves Ratchet's embedded pages: the backoff calculator, the
// simulator and the dashboard. Every asset is embedded in the binary; the
// pages need no network beyond the Ratchet server.
package web

import "net/http"

// Handler serves the pages. The server mounts it for every path outside /v1
// and the operational endpoints.
func Handler() http.Handler {
	mux := http.NewServeMux()
	return mux
}
