// Package api holds the JSON bodies of Weir's REST API — Flink's REST API
// shapes and field names (docs/rest-openapi.yaml lists every path) — for
// the server (package rest), the JobManager that fills them and the
// client. It imports nothing of Weir's. Times are Unix milliseconds and
// durations milliseconds, as in Flink; -1 means "not yet".
package api

// ErrorResponse is Flink's error body: {"errors": ["..."]}.
type ErrorResponse struct {
	Errors []string `json:"errors"`
}

// Job states, as Flink's JobStatus.
const (
	StateInitializing = "INITIALIZING"
	StateCreated      = "CREATED"
	StateRunning      = "RUNNING"
	StateFailing      = "FAILING"
	StateFailed       = "FAILED"
	StateCancelling   = "CANCELLING"
	StateCanceled     = "CANCELED"
	StateFinished     = "FINISHED"
	StateRestarting   = "RESTARTING"
	StateSuspended    = "SUSPENDED"
)

// Globally terminal reports whether a job in state s has ended for good.
func Terminal(s string) bool {
	return s == StateFailed || s == StateCanceled || s == StateFinished
}

// Overview is GET /overview: the cluster at a glance.
type Overview struct {
	TaskManagers   int    `json:"taskmanagers"`
	SlotsTotal     int    `json:"slots-total"`
	SlotsAvailable int    `json:"slots-available"`
	JobsRunning    int    `json:"jobs-running"`
	JobsFinished   int    `json:"jobs-finished"`
	JobsCancelled  int    `json:"jobs-cancelled"`
	JobsFailed     int    `json:"jobs-failed"`
	FlinkVersion   string `json:"flink-version"`
	FlinkCommit    string `json:"flink-commit"`
}

// Config is GET /config: what the dashboard needs to know of the server.
type Config struct {
	RefreshInterval int64    `json:"refresh-interval"`
	TimezoneName    string   `json:"timezone-name"`
	TimezoneOffset  int64    `json:"timezone-offset"`
	FlinkVersion    string   `json:"flink-version"`
	FlinkRevision   string   `json:"flink-revision"`
	Features        Features `json:"features"`
}

// Features says which state-changing calls the server accepts.
type Features struct {
	WebSubmit  bool `json:"web-submit"`
	WebCancel  bool `json:"web-cancel"`
	WebRescale bool `json:"web-rescale"`
	WebHistory bool `json:"web-history"`
}

// JobIDStatus is one entry of GET /jobs.
type JobIDStatus struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// JobIDsWithStatus is GET /jobs.
type JobIDsWithStatus struct {
	Jobs []JobIDStatus `json:"jobs"`
}

// TaskCounts counts subtasks by execution state (Flink's "tasks" and
// "status-counts").
type TaskCounts struct {
	Total        int `json:"total,omitempty"`
	Created      int `json:"created"`
	Scheduled    int `json:"scheduled"`
	Deploying    int `json:"deploying"`
	Running      int `json:"running"`
	Finished     int `json:"finished"`
	Canceling    int `json:"canceling"`
	Canceled     int `json:"canceled"`
	Failed       int `json:"failed"`
	Reconciling  int `json:"reconciling"`
	Initializing int `json:"initializing"`
}

// JobOverview is one entry of GET /jobs/overview.
type JobOverview struct {
	JID              string     `json:"jid"`
	Name             string     `json:"name"`
	State            string     `json:"state"`
	StartTime        int64      `json:"start-time"`
	EndTime          int64      `json:"end-time"`
	Duration         int64      `json:"duration"`
	LastModification int64      `json:"last-modification"`
	Tasks            TaskCounts `json:"tasks"`
}

// MultipleJobsDetails is GET /jobs/overview.
type MultipleJobsDetails struct {
	Jobs []JobOverview `json:"jobs"`
}

// IOMetrics are a vertex's or subtask's record and byte counts (Flink's
// "metrics" object): records in and out of the subtask's chain (a source
// subtask's read-records are those its source read), bytes its source
// read from outside and its sinks wrote out (records between subtasks
// are handed over in memory, never serialized: there are no network
// bytes). The -complete flags are set once the job has ended.
type IOMetrics struct {
	ReadBytes            int64 `json:"read-bytes"`
	ReadBytesComplete    bool  `json:"read-bytes-complete"`
	WriteBytes           int64 `json:"write-bytes"`
	WriteBytesComplete   bool  `json:"write-bytes-complete"`
	ReadRecords          int64 `json:"read-records"`
	ReadRecordsComplete  bool  `json:"read-records-complete"`
	WriteRecords         int64 `json:"write-records"`
	WriteRecordsComplete bool  `json:"write-records-complete"`
}

// JobVertex is one vertex of GET /jobs/:jobid.
type JobVertex struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	MaxParallelism int        `json:"maxParallelism"`
	Parallelism    int        `json:"parallelism"`
	Status         string     `json:"status"`
	StartTime      int64      `json:"start-time"`
	EndTime        int64      `json:"end-time"`
	Duration       int64      `json:"duration"`
	Tasks          TaskCounts `json:"tasks"`
	Metrics        IOMetrics  `json:"metrics"`
	// Subtasks is Weir's addition, only with ?subtasks=all (Flink serves
	// them under /jobs/:jobid/vertices/:vertexid): each subtask's status.
	Subtasks []Subtask `json:"subtasks,omitempty"`
}

// Subtask is one parallel instance of a vertex, in its current attempt.
type Subtask struct {
	Subtask       int       `json:"subtask"`
	Status        string    `json:"status"`
	Attempt       int       `json:"attempt"`
	Endpoint      string    `json:"endpoint"`
	TaskManagerID string    `json:"taskmanager-id"`
	StartTime     int64     `json:"start-time"`
	EndTime       int64     `json:"end-time"`
	Duration      int64     `json:"duration"`
	Metrics       IOMetrics `json:"metrics"`
}

// PlanNode is a vertex in the job's plan.
type PlanNode struct {
	ID          string      `json:"id"`
	Parallelism int         `json:"parallelism"`
	Operator    string      `json:"operator"`
	Description string      `json:"description"`
	Inputs      []PlanInput `json:"inputs,omitempty"`
}

// PlanInput is an edge into a plan node.
type PlanInput struct {
	Num          int    `json:"num"`
	ID           string `json:"id"`
	ShipStrategy string `json:"ship_strategy"`
	Exchange     string `json:"exchange"`
}

// TaskManagers is GET /taskmanagers (Flink's TaskManagersInfo).
type TaskManagers struct {
	TaskManagers []TaskManagerInfo `json:"taskmanagers"`
}

// TaskManagerInfo is one TaskManager: Weir's JobManager has one, whose
// slots run in its own process (Path is its location, DataPort 0: its
// subtasks exchange records in memory).
type TaskManagerInfo struct {
	ID                     string              `json:"id"`
	Path                   string              `json:"path"`
	DataPort               int                 `json:"dataPort"`
	JmxPort                int                 `json:"jmxPort"`
	TimeSinceLastHeartbeat int64               `json:"timeSinceLastHeartbeat"`
	SlotsNumber            int                 `json:"slotsNumber"`
	FreeSlots              int                 `json:"freeSlots"`
	Hardware               TaskManagerHardware `json:"hardware"`
}

// TaskManagerHardware is Flink's HardwareDescription.
type TaskManagerHardware struct {
	CPUCores       int   `json:"cpuCores"`
	PhysicalMemory int64 `json:"physicalMemory"`
	FreeMemory     int64 `json:"freeMemory"`
	ManagedMemory  int64 `json:"managedMemory"`
}

// JobAccumulators is GET /jobs/:jobid/accumulators (Flink's
// JobAccumulatorsInfo). Weir's operators have no user accumulators (their
// counts are metrics): the lists are empty, for tools that read them.
type JobAccumulators struct {
	JobAccumulators                []any          `json:"job-accumulators"`
	UserTaskAccumulators           []any          `json:"user-task-accumulators"`
	SerializedUserTaskAccumulators map[string]any `json:"serialized-user-task-accumulators"`
}

// JobStatus is GET /jobs/:jobid/status (Flink's JobStatusInfo).
type JobStatus struct {
	Status string `json:"status"`
}

// JobPlan is GET /jobs/:jobid/plan (Flink's JobPlanInfo).
type JobPlan struct {
	Plan Plan `json:"plan"`
}

// Plan is the job's graph of vertices.
type Plan struct {
	JID   string     `json:"jid"`
	Name  string     `json:"name"`
	Type  string     `json:"type"`
	Nodes []PlanNode `json:"nodes"`
}

// JobDetails is GET /jobs/:jobid.
type JobDetails struct {
	JID            string           `json:"jid"`
	Name           string           `json:"name"`
	IsStoppable    bool             `json:"isStoppable"`
	State          string           `json:"state"`
	JobType        string           `json:"job-type"`
	StartTime      int64            `json:"start-time"`
	EndTime        int64            `json:"end-time"`
	Duration       int64            `json:"duration"`
	MaxParallelism int              `json:"maxParallelism"`
	Now            int64            `json:"now"`
	Timestamps     map[string]int64 `json:"timestamps"`
	Vertices       []JobVertex      `json:"vertices"`
	StatusCounts   TaskCounts       `json:"status-counts"`
	Plan           Plan             `json:"plan"`
}

// VertexDetails is GET /jobs/:jobid/vertices/:vertexid.
type VertexDetails struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Parallelism    int    `json:"parallelism"`
	MaxParallelism int    `json:"maxParallelism"`
	Now            int64  `json:"now"`
	// SubtasksTotal is Weir's: how many subtasks there are; Subtasks
	// holds those of the ?offset= and ?limit= window (default all).
	SubtasksTotal int       `json:"subtasks-total"`
	Subtasks      []Subtask `json:"subtasks"`
}

// Exception is one entry of the exception history.
type Exception struct {
	ExceptionName        string            `json:"exceptionName"`
	Stacktrace           string            `json:"stacktrace"`
	Timestamp            int64             `json:"timestamp"`
	TaskName             string            `json:"taskName,omitempty"`
	Location             string            `json:"location,omitempty"`
	Endpoint             string            `json:"endpoint,omitempty"`
	TaskManagerID        string            `json:"taskManagerId,omitempty"`
	FailureLabels        map[string]string `json:"failureLabels"`
	ConcurrentExceptions []Exception       `json:"concurrentExceptions"`
}

// ExceptionHistory holds a job's failures, newest first.
type ExceptionHistory struct {
	Entries   []Exception `json:"entries"`
	Truncated bool        `json:"truncated"`
}

// JobExceptions is GET /jobs/:jobid/exceptions. RootException and
// Timestamp are the newest failure (Flink's older fields, still read by
// tools).
type JobExceptions struct {
	RootException    string           `json:"root-exception,omitempty"`
	Timestamp        int64            `json:"timestamp,omitempty"`
	AllExceptions    []Exception      `json:"all-exceptions"`
	Truncated        bool             `json:"truncated"`
	ExceptionHistory ExceptionHistory `json:"exceptionHistory"`
}

// JobSubmitRequest is Weir's body of POST /jobs: a Flink SQL script (its
// SET, CREATE and INSERT statements, run as weir run runs them). Flink's
// POST /jobs takes a serialized JobGraph and jar-run a jar, neither of
// which fits a SQL engine; the answer is Flink's.
type JobSubmitRequest struct {
	// Script is the SQL text; Name the job's name (default: pipeline.name,
	// else "sql-job").
	Script string `json:"script"`
	Name   string `json:"name,omitempty"`
	// Settings override the script's SET statements (as weir run -D).
	Settings map[string]string `json:"settings,omitempty"`
	// SavepointPath restores the job from a savepoint or checkpoint
	// (Flink's savepointPath of jar-run).
	SavepointPath string `json:"savepointPath,omitempty"`
}

// JobSubmitResponse answers POST /jobs (Flink's jobUrl, plus the id).
type JobSubmitResponse struct {
	JobURL string `json:"jobUrl"`
	JID    string `json:"jid"`
}

// SavepointTriggerRequest is the body of POST /jobs/:jobid/savepoints.
type SavepointTriggerRequest struct {
	TargetDirectory string `json:"target-directory,omitempty"`
	// CancelJob stops the job with the savepoint (Flink's cancel-with-
	// savepoint, which is a stop here).
	CancelJob bool `json:"cancel-job,omitempty"`
	// FormatType is Flink's savepoint format: CANONICAL (the default,
	// and the only format Weir writes).
	FormatType string `json:"formatType,omitempty"`
	// TriggerID makes the call idempotent, as in Flink: a second POST with
	// the same id for the same job starts nothing and answers that id.
	TriggerID string `json:"triggerId,omitempty"`
}

// StopRequest is the body of POST /jobs/:jobid/stop.
type StopRequest struct {
	TargetDirectory string `json:"targetDirectory,omitempty"`
	Drain           bool   `json:"drain,omitempty"`
	FormatType      string `json:"formatType,omitempty"`
	TriggerID       string `json:"triggerId,omitempty"`
}

// TriggerResponse answers a POST that started an operation.
type TriggerResponse struct {
	RequestID string `json:"request-id"`
}

// QueueStatus is Flink's {"id": "IN_PROGRESS" | "COMPLETED"}.
type QueueStatus struct {
	ID string `json:"id"`
}

// FailureCause says why an operation failed (Flink's serialized
// throwable, as text).
type FailureCause struct {
	Class      string `json:"class"`
	StackTrace string `json:"stack-trace"`
}

// SavepointInfo is the result of a completed savepoint operation: its
// location, or why it failed.
type SavepointInfo struct {
	Location     string        `json:"location,omitempty"`
	FailureCause *FailureCause `json:"failure-cause,omitempty"`
}

// SavepointStatus is GET /jobs/:jobid/savepoints/:triggerid.
type SavepointStatus struct {
	Status    QueueStatus    `json:"status"`
	Operation *SavepointInfo `json:"operation,omitempty"`
}

// Metric is one {"id", "value"} of Flink's metric endpoints (watermarks,
// vertex metrics). Without ?get= a metric endpoint lists the ids only.
type Metric struct {
	ID    string `json:"id"`
	Value string `json:"value,omitempty"`
}

// AggregatedMetric is one metric of GET
// /jobs/:jobid/vertices/:vertexid/subtasks/metrics, aggregated over the
// subtasks asked for: only the aggregations ?agg= asks for are set (all
// four without it), as in Flink. Without ?get= only the ids are listed.
type AggregatedMetric struct {
	ID  string   `json:"id"`
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	Avg *float64 `json:"avg,omitempty"`
	Sum *float64 `json:"sum,omitempty"`
}

// BackPressure is GET /jobs/:jobid/vertices/:vertexid/backpressure.
// Flink 1.15 renamed backpressure-level to backpressureLevel and serves
// both; so does Weir.
type BackPressure struct {
	// Status is "ok" with measurements, "deprecated" (Flink's "not
	// available") without.
	Status            string `json:"status"`
	BackpressureLevel string `json:"backpressureLevel,omitempty"`
	// BackpressureLevelOld is Flink's deprecated name of the same level.
	BackpressureLevelOld string `json:"backpressure-level,omitempty"`
	EndTimestamp         int64  `json:"end-timestamp,omitempty"`
	// SubtasksTotal is Weir's: how many subtasks were measured; Subtasks
	// holds those of the ?offset= and ?limit= window (default all).
	SubtasksTotal int                   `json:"subtasks-total,omitempty"`
	Subtasks      []SubtaskBackPressure `json:"subtasks,omitempty"`
}

// The back-pressure levels of a ratio, as Flink's: up to 10 % of the time
// back-pressured is ok, up to 50 % low, above it high.
const (
	BackPressureOK   = "ok"
	BackPressureLow  = "low"
	BackPressureHigh = "high"
)

// BackPressureLevel is Flink's level of a back-pressured ratio (0..1).
func BackPressureLevel(ratio float64) string {
	switch {
	case ratio <= 0.10:
		return BackPressureOK
	case ratio <= 0.5:
		return BackPressureLow
	}
	return BackPressureHigh
}

// SubtaskBackPressure is one subtask's share of time back-pressured
// (ratio), idle and busy, each 0..1 and adding up to 1, over the last
// rate window (Flink's backPressuredTimeMsPerSecond, idleTimeMsPerSecond,
// busyTimeMsPerSecond divided by 1000).
type SubtaskBackPressure struct {
	Subtask              int     `json:"subtask"`
	AttemptNumber        int     `json:"attempt-number"`
	BackpressureLevel    string  `json:"backpressureLevel"`
	BackpressureLevelOld string  `json:"backpressure-level"`
	Ratio                float64 `json:"ratio"`
	IdleRatio            float64 `json:"idleRatio"`
	BusyRatio            float64 `json:"busyRatio"`
}
