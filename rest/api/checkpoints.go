package api

// CheckpointCounts are the "counts" of GET /jobs/:jobid/checkpoints.
type CheckpointCounts struct {
	Restored   int `json:"restored"`
	Total      int `json:"total"`
	InProgress int `json:"in_progress"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
}

// MinMaxAvg summarises a value over checkpoints or subtasks (Flink's
// StatsSummaryDto).
type MinMaxAvg struct {
	Min  int64   `json:"min"`
	Max  int64   `json:"max"`
	Avg  int64   `json:"avg"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
}

// CheckpointSummary is the "summary" of GET /jobs/:jobid/checkpoints,
// over the completed checkpoints in the history.
type CheckpointSummary struct {
	CheckpointedSize  MinMaxAvg `json:"checkpointed_size"`
	StateSize         MinMaxAvg `json:"state_size"`
	EndToEndDuration  MinMaxAvg `json:"end_to_end_duration"`
	AlignmentBuffered MinMaxAvg `json:"alignment_buffered"`
	ProcessedData     MinMaxAvg `json:"processed_data"`
	PersistedData     MinMaxAvg `json:"persisted_data"`
}

// Checkpoint statuses and types, as Flink spells them.
const (
	CheckpointInProgress = "IN_PROGRESS"
	CheckpointCompleted  = "COMPLETED"
	CheckpointFailed     = "FAILED"
	TypeCheckpoint       = "CHECKPOINT"
	TypeUnaligned        = "UNALIGNED_CHECKPOINT"
	TypeSavepoint        = "SAVEPOINT"
	TypeSyncSavepoint    = "SYNC_SAVEPOINT"
)

// CheckpointStatistics is one checkpoint: an entry of "history", a
// "latest" one, or GET /jobs/:jobid/checkpoints/details/:checkpointid
// (with Tasks).
type CheckpointStatistics struct {
	ClassName               string `json:"className"`
	ID                      int64  `json:"id"`
	Status                  string `json:"status"`
	IsSavepoint             bool   `json:"is_savepoint"`
	SavepointFormat         string `json:"savepointFormat,omitempty"`
	TriggerTimestamp        int64  `json:"trigger_timestamp"`
	LatestAckTimestamp      int64  `json:"latest_ack_timestamp"`
	CheckpointedSize        int64  `json:"checkpointed_size"`
	StateSize               int64  `json:"state_size"`
	EndToEndDuration        int64  `json:"end_to_end_duration"`
	AlignmentBuffered       int64  `json:"alignment_buffered"`
	ProcessedData           int64  `json:"processed_data"`
	PersistedData           int64  `json:"persisted_data"`
	NumSubtasks             int    `json:"num_subtasks"`
	NumAcknowledgedSubtasks int    `json:"num_acknowledged_subtasks"`
	CheckpointType          string `json:"checkpoint_type"`
	// Tasks, by vertex id, is only in the details call.
	Tasks        map[string]TaskCheckpointStatistics `json:"tasks"`
	ExternalPath string                              `json:"external_path,omitempty"`
	Discarded    bool                                `json:"discarded"`
	// FailureTimestamp and FailureMessage are set on a failed checkpoint.
	FailureTimestamp int64  `json:"failure_timestamp,omitempty"`
	FailureMessage   string `json:"failure_message,omitempty"`
}

// RestoredCheckpoint is "latest.restored".
type RestoredCheckpoint struct {
	ID               int64  `json:"id"`
	RestoreTimestamp int64  `json:"restore_timestamp"`
	IsSavepoint      bool   `json:"is_savepoint"`
	ExternalPath     string `json:"external_path"`
}

// LatestCheckpoints is "latest": the newest of each kind, null when none.
type LatestCheckpoints struct {
	Completed *CheckpointStatistics `json:"completed"`
	Savepoint *CheckpointStatistics `json:"savepoint"`
	Failed    *CheckpointStatistics `json:"failed"`
	Restored  *RestoredCheckpoint   `json:"restored"`
}

// CheckpointingStatistics is GET /jobs/:jobid/checkpoints.
type CheckpointingStatistics struct {
	Counts  CheckpointCounts       `json:"counts"`
	Summary CheckpointSummary      `json:"summary"`
	Latest  LatestCheckpoints      `json:"latest"`
	History []CheckpointStatistics `json:"history"`
}

// TaskCheckpointStatistics is one vertex's part in one checkpoint.
type TaskCheckpointStatistics struct {
	ID                      int64  `json:"id"`
	Status                  string `json:"status"`
	LatestAckTimestamp      int64  `json:"latest_ack_timestamp"`
	CheckpointedSize        int64  `json:"checkpointed_size"`
	StateSize               int64  `json:"state_size"`
	EndToEndDuration        int64  `json:"end_to_end_duration"`
	AlignmentBuffered       int64  `json:"alignment_buffered"`
	ProcessedData           int64  `json:"processed_data"`
	PersistedData           int64  `json:"persisted_data"`
	NumSubtasks             int    `json:"num_subtasks"`
	NumAcknowledgedSubtasks int    `json:"num_acknowledged_subtasks"`
}

// CheckpointDuration is a subtask's synchronous and asynchronous
// snapshot time, ms.
type CheckpointDuration struct {
	Sync  int64 `json:"sync"`
	Async int64 `json:"async"`
}

// CheckpointAlignment is a subtask's barrier alignment: duration ms and
// bytes (Weir aligns without buffering: 0).
type CheckpointAlignment struct {
	Buffered  int64 `json:"buffered"`
	Processed int64 `json:"processed"`
	Persisted int64 `json:"persisted"`
	Duration  int64 `json:"duration"`
}

// SubtaskCheckpointStatistics is one subtask's part in one checkpoint.
// Status is "completed" once it acknowledged, else "pending_or_failed"
// (then the numbers are 0 and Checkpoint and Alignment absent).
type SubtaskCheckpointStatistics struct {
	Index               int                  `json:"index"`
	Status              string               `json:"status"`
	AckTimestamp        int64                `json:"ack_timestamp"`
	EndToEndDuration    int64                `json:"end_to_end_duration"`
	StateSize           int64                `json:"state_size"`
	CheckpointedSize    int64                `json:"checkpointed_size"`
	Checkpoint          *CheckpointDuration  `json:"checkpoint,omitempty"`
	Alignment           *CheckpointAlignment `json:"alignment,omitempty"`
	StartDelay          int64                `json:"start_delay"`
	UnalignedCheckpoint bool                 `json:"unaligned_checkpoint"`
	Aborted             bool                 `json:"aborted"`
}

// SubtasksSummary summarises a vertex's subtasks in one checkpoint.
type SubtasksSummary struct {
	CheckpointedSize   MinMaxAvg `json:"checkpointed_size"`
	StateSize          MinMaxAvg `json:"state_size"`
	EndToEndDuration   MinMaxAvg `json:"end_to_end_duration"`
	CheckpointDuration struct {
		Sync  MinMaxAvg `json:"sync"`
		Async MinMaxAvg `json:"async"`
	} `json:"checkpoint_duration"`
	Alignment struct {
		Buffered  MinMaxAvg `json:"buffered"`
		Processed MinMaxAvg `json:"processed"`
		Persisted MinMaxAvg `json:"persisted"`
		Duration  MinMaxAvg `json:"duration"`
	} `json:"alignment"`
	StartDelay MinMaxAvg `json:"start_delay"`
}

// TaskCheckpointDetails is GET
// /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid.
type TaskCheckpointDetails struct {
	TaskCheckpointStatistics
	Summary  SubtasksSummary               `json:"summary"`
	Subtasks []SubtaskCheckpointStatistics `json:"subtasks"`
}

// TimelineEntry is Weir's per-subtask checkpoint timeline (not in Flink):
// when, in ms after the trigger, the subtask reached each phase. The
// times are derived from what the subtask reported with its
// acknowledgement: barrier = ack − async − sync − alignment, aligned =
// barrier + alignment, sync done = aligned + sync, async done = ack.
// Completed is when the whole checkpoint completed (the metadata is
// durable and sinks are told to commit), -1 if it did not. A subtask that
// has not acknowledged has only Phase.
type TimelineEntry struct {
	VertexID     string `json:"vertex_id"`
	VertexName   string `json:"vertex_name"`
	Subtask      int    `json:"subtask"`
	Phase        string `json:"phase"`
	Trigger      int64  `json:"trigger"`
	BarrierIn    int64  `json:"barrier_received"`
	Aligned      int64  `json:"aligned"`
	SyncDone     int64  `json:"sync_done"`
	AsyncDone    int64  `json:"async_done"`
	Acknowledged int64  `json:"acknowledged"`
	Completed    int64  `json:"completed"`
	StateSize    int64  `json:"state_size"`
}

// CheckpointTimeline is GET
// /jobs/:jobid/checkpoints/details/:checkpointid/timeline, and with
// ?slowest=N the N subtasks that acknowledged last (unacknowledged
// first), slowest first — GET .../slowest?n=N.
type CheckpointTimeline struct {
	ID               int64           `json:"id"`
	Status           string          `json:"status"`
	TriggerTimestamp int64           `json:"trigger_timestamp"`
	EndToEndDuration int64           `json:"end_to_end_duration"`
	Subtasks         []TimelineEntry `json:"subtasks"`
	// SubtasksTotal is how many subtasks the timeline has when
	// ?offset=&limit= page Subtasks (omitted for /slowest).
	SubtasksTotal int `json:"subtasks-total,omitempty"`
}
