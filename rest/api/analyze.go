package api

// ExplainAnalyze is GET /jobs/:jobid/explain-analyze (Weir's, as
// RisingWave's EXPLAIN ANALYZE): the job's plan with each vertex's live
// figures — records and rates, time busy and back-pressured, state size,
// watermark — read from its subtasks' metrics, never recomputed from data.
type ExplainAnalyze struct {
	JID   string `json:"jid"`
	Name  string `json:"name"`
	State string `json:"state"`
	Now   int64  `json:"now"`
	// Plan is the plan as text, each vertex's line followed by its
	// figures, as weir explain-analyze and EXPLAIN ANALYZE print it.
	Plan     string           `json:"plan"`
	Vertices []AnalyzedVertex `json:"vertices"`
}

// AnalyzedVertex is one vertex of ExplainAnalyze, its subtasks' values
// summed (counts, rates, state size), averaged (ratios, with the highest
// subtask's next to it) or the lowest (watermark). Names follow Flink's
// job details (read-records) and back-pressure (busyRatio) bodies.
type AnalyzedVertex struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Parallelism int    `json:"parallelism"`
	// Inputs are the ids of the vertices it reads from.
	Inputs []string `json:"inputs"`
	// ReadRecords, WriteRecords: the subtasks' numRecordsIn, numRecordsOut.
	ReadRecords  int64 `json:"read-records"`
	WriteRecords int64 `json:"write-records"`
	// ReadRecordsPerSecond, WriteRecordsPerSecond: numRecordsInPerSecond,
	// numRecordsOutPerSecond over the last 5 s.
	ReadRecordsPerSecond  float64 `json:"read-records-per-second"`
	WriteRecordsPerSecond float64 `json:"write-records-per-second"`
	// BusyRatio, BackPressuredRatio, IdleRatio: the share of the last 5 s
	// (0..1) averaged over the subtasks; Max… the highest one subtask's.
	BusyRatio             float64 `json:"busyRatio"`
	MaxBusyRatio          float64 `json:"maxBusyRatio"`
	BackPressuredRatio    float64 `json:"backPressuredRatio"`
	MaxBackPressuredRatio float64 `json:"maxBackPressuredRatio"`
	IdleRatio             float64 `json:"idleRatio"`
	BackpressureLevel     string  `json:"backpressureLevel"`
	// StateSize is the vertex's state in the last completed checkpoint:
	// the whole state its subtasks' parts name (REST state_size), with the
	// shared files of earlier incremental checkpoints they reuse.
	StateSize int64 `json:"state-size"`
	// LiveStateSize is its operators' live keyed state now, as their
	// state backends estimate it (their stateSize metrics summed).
	LiveStateSize int64 `json:"live-state-size"`
	// Watermark is the lowest current input watermark of its subtasks,
	// ms (Long.MIN_VALUE: none yet).
	Watermark int64 `json:"watermark"`
	// SourceLag is a source's pendingRecords summed (records behind the
	// end of its Kafka partitions); 0 elsewhere.
	SourceLag int64              `json:"source-lag"`
	Operators []AnalyzedOperator `json:"operators"`
}

// AnalyzedOperator is one operator of a vertex's chain, its subtasks'
// values summed (counts, state size) or the lowest (watermarks).
type AnalyzedOperator struct {
	Name                   string `json:"name"`
	UID                    string `json:"uid"`
	ReadRecords            int64  `json:"read-records"`
	WriteRecords           int64  `json:"write-records"`
	LateRecordsDropped     int64  `json:"numLateRecordsDropped"`
	CurrentInputWatermark  int64  `json:"currentInputWatermark"`
	CurrentOutputWatermark int64  `json:"currentOutputWatermark"`
	// LiveStateSize is the operator's live keyed state as its subtasks'
	// state backends estimate it (their stateSize metrics summed), bytes.
	LiveStateSize int64 `json:"live-state-size"`
}

// HotSubtasks is GET /jobs/:jobid/hot-subtasks (Weir's, FLINK-39489): the
// ?n= hottest subtasks of the job ranked ?by= busy (default),
// backpressure or lag.
type HotSubtasks struct {
	By       string       `json:"by"`
	Now      int64        `json:"now"`
	Subtasks []HotSubtask `json:"subtasks"`
}

// HotSubtask is one subtask of HotSubtasks: its share of the last 5 s
// busy and back-pressured (0..1), its source lag (records), its rates.
type HotSubtask struct {
	VertexID              string  `json:"vertex-id"`
	VertexName            string  `json:"vertex-name"`
	Subtask               int     `json:"subtask"`
	BusyRatio             float64 `json:"busyRatio"`
	BackPressuredRatio    float64 `json:"backPressuredRatio"`
	IdleRatio             float64 `json:"idleRatio"`
	SourceLag             int64   `json:"source-lag"`
	ReadRecordsPerSecond  float64 `json:"read-records-per-second"`
	WriteRecordsPerSecond float64 `json:"write-records-per-second"`
}

// The rankings of HotSubtasks.
const (
	HotByBusy         = "busy"
	HotByBackPressure = "backpressure"
	HotByLag          = "lag"
)

// TailEvent is one event of GET /jobs/:jobid/vertices/:vertexid/tail, a
// stream of server-sent events ("data: {json}"): a sampled row, or the
// stream's counts (every second, and last when it ends).
type TailEvent struct {
	Row   *TailRow   `json:"row,omitempty"`
	Stats *TailStats `json:"stats,omitempty"`
}

// TailRow is a row a vertex emitted (for a sink: received), as its
// RowKind (+I, -U, +U, -D), its fields printed and its event time (ms;
// Long.MIN_VALUE: none), from subtask Subtask.
type TailRow struct {
	Subtask   int      `json:"subtask"`
	Kind      string   `json:"kind"`
	Fields    []string `json:"fields"`
	Timestamp int64    `json:"timestamp"`
}

// TailStats counts a tail so far: rows the vertex passed while tailed
// (seen), rows sent (sampled, at most rate a second), samples lost to a
// full buffer (dropped: the reader was slower than the rate; the job is
// never slowed). Ended says the stream ends here: the limit was reached
// or the job ended.
type TailStats struct {
	Seen    int64  `json:"seen"`
	Sampled int64  `json:"sampled"`
	Dropped int64  `json:"dropped"`
	Rate    int    `json:"rate"`
	Ended   string `json:"ended,omitempty"`
}
