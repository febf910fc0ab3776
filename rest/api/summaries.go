package api

// WatermarkSummary is GET /jobs/:jobid/vertices/:vertexid/watermarks/summary
// (Weir's): a vertex's subtask watermarks summarised, for pages that
// must stay small at thousands of subtasks. Min, Max and Avg cover the
// subtasks that have a watermark (all 0 when none has); Lowest are the ?n=
// (default 10) subtasks holding the vertex back, those without a
// watermark first, each in /watermarks' form.
type WatermarkSummary struct {
	SubtasksTotal int      `json:"subtasks-total"`
	NoWatermark   int      `json:"no-watermark"`
	Min           int64    `json:"min"`
	Max           int64    `json:"max"`
	Avg           float64  `json:"avg"`
	Lowest        []Metric `json:"lowest"`
}

// CheckpointPhases is GET
// /jobs/:jobid/checkpoints/details/:checkpointid/phases (Weir's): one
// checkpoint's timeline summarised per vertex — the time its subtasks
// spent in each phase and, for those that did not acknowledge, the phase
// each reached — so that 5,000 subtasks make a few rows.
type CheckpointPhases struct {
	ID                      int64          `json:"id"`
	Status                  string         `json:"status"`
	TriggerTimestamp        int64          `json:"trigger_timestamp"`
	EndToEndDuration        int64          `json:"end_to_end_duration"`
	NumSubtasks             int            `json:"num_subtasks"`
	NumAcknowledgedSubtasks int            `json:"num_acknowledged_subtasks"`
	Vertices                []VertexPhases `json:"vertices"`
}

// VertexPhases is one vertex of CheckpointPhases. The durations, ms, are
// over its acknowledged subtasks (Flink's min/max/avg/percentiles; all 0
// when none acknowledged), as /subtasks/:vertexid's summary has them:
// start_delay (trigger to the first barrier's arrival, as each subtask
// measured it), alignment, sync and async parts, end to end; StateSize
// is their sum.
type VertexPhases struct {
	VertexID                string         `json:"vertex_id"`
	VertexName              string         `json:"vertex_name"`
	NumSubtasks             int            `json:"num_subtasks"`
	NumAcknowledgedSubtasks int            `json:"num_acknowledged_subtasks"`
	StartDelay              MinMaxAvg      `json:"start_delay"`
	Alignment               MinMaxAvg      `json:"alignment"`
	Sync                    MinMaxAvg      `json:"sync"`
	Async                   MinMaxAvg      `json:"async"`
	EndToEndDuration        MinMaxAvg      `json:"end_to_end_duration"`
	StateSize               int64          `json:"state_size"`
	Pending                 []PendingPhase `json:"pending"`
}

// PendingPhase counts a vertex's subtasks that had not acknowledged, by
// the phase they reached (TimelineEntry's phase); Subtasks are the first
// 20 indexes, in order.
type PendingPhase struct {
	Phase    string `json:"phase"`
	Count    int    `json:"count"`
	Subtasks []int  `json:"subtasks"`
}
