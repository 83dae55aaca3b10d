package wire

// Health is GET /healthz: the process serves HTTP. It reads no store, so a
// load balancer's liveness check never waits on the database.
type Health struct {
	Status string `json:"status" enum:"ok"`
	// Version is the server's version, as `ratchet version` prints it:
	// a release's (0.1.0), else the module version of the build, else
	// "dev". A rolling upgrade watches it change node by node.
	Version string `json:"version" doc:"the server's version: a release's such as 0.1.0, else the module version of the build, else dev"`
}

// Readiness is GET /readyz: whether the store answers (200, status ready)
// or not (503, status unavailable), and which store it is.
type Readiness struct {
	Status string `json:"status" enum:"ready,unavailable"`
	Store  string `json:"store" enum:"sqlite,postgres" doc:"the store driver"`
}

// Health and readiness statuses.
const (
	HealthOK             = "ok"
	ReadinessReady       = "ready"
	ReadinessUnavailable = "unavailable"
)
