package wire

// RunCreate is POST /v1/runs.
type RunCreate struct {
	Name string `json:"name,omitempty" maxLength:"200"`
}

// Run groups steps (jobs). Steps and Counts are filled when the run is
// read; the responses of start and finish leave them empty.
type Run struct {
	ID         int64              `json:"id"`
	Name       string             `json:"name"`
	State      RunState           `json:"state"`
	CreatedAt  string             `json:"createdAt" format:"date-time"`
	FinishedAt string             `json:"finishedAt,omitempty" format:"date-time"`
	Steps      []Job              `json:"steps"`
	Counts     map[JobState]int64 `json:"counts" doc:"steps per state"`
}

// RunQuery is the query of GET /v1/runs.
type RunQuery struct {
	Cursor string `json:"cursor,omitempty" doc:"nextCursor of the previous page"`
	Limit  string `json:"limit,omitempty" query:"listLimit" doc:"1–500, default 100"`
}

// RunList is GET /v1/runs: the project's runs, newest first, without their
// steps (GET /v1/runs/{id} reads those); NextCursor is null on the last
// page.
type RunList struct {
	Runs       []Run   `json:"runs"`
	NextCursor *string `json:"nextCursor"`
}
