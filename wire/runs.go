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
