// Package metrics owns the live metric groups of the jobs running in a
// process — Flink's MetricRegistry with its job, task (subtask) and operator
// groups. The runtime and the subtasks keep the counts; they publish them
// into these groups as atomics (a subtask at every processing-time tick and
// when it exits, the job driver on every checkpoint and restart), and a
// reporter (metrics/prom) reads them at scrape time. Nothing here computes a
// value from data, and nothing imports a reporter's library.
package metrics

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Registry holds the jobs of a process. A job stays registered after it
// ends, with its last values, until Remove: a scrape after a bounded job
// sees its final counts (Flink drops a finished job's metrics; a one-job
// process such as weir run exits instead). Safe for concurrent use.
type Registry struct {
	mu struct {
		sync.Mutex
		jobs []*Job
	}
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// AddJob registers a job (id and name as Flink's job_id, job_name) and
// returns its group.
func (r *Registry) AddJob(id, name string) *Job {
	j := &Job{ID: id, Name: name}
	j.LastRestoreTimestamp.Store(-1)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.mu.jobs = append(r.mu.jobs, j)
	return j
}

// Remove unregisters a job.
func (r *Registry) Remove(j *Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.mu.jobs {
		if x == j {
			r.mu.jobs = append(r.mu.jobs[:i], r.mu.jobs[i+1:]...)
			return
		}
	}
}

// Jobs returns the registered jobs, in registration order.
func (r *Registry) Jobs() []*Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Job(nil), r.mu.jobs...)
}

// Job is a job's group: Flink's JobManager job scope (restarts,
// checkpoints) and the subtasks of its current attempt.
type Job struct {
	ID, Name string
	// NumRestarts counts failovers (Flink's numRestarts; every failover
	// restarts the whole job, so it is also fullRestarts).
	NumRestarts atomic.Int64
	// LastRestoreTimestamp is when the current attempt restored its state
	// from a checkpoint or savepoint, ms since the epoch; -1 when it started
	// empty (Flink's lastCheckpointRestoreTimestamp).
	LastRestoreTimestamp atomic.Int64
	// Checkpoint counts and the last completed checkpoint, as Flink's
	// numberOfCompletedCheckpoints, numberOfFailedCheckpoints,
	// lastCompletedCheckpointId, lastCheckpointDuration (ms),
	// lastCheckpointSize (bytes written by every subtask),
	// lastCheckpointFullSize (the whole state it names, with the shared
	// files of incremental checkpoints it reuses).
	CompletedCheckpoints, FailedCheckpoints atomic.Int64
	LastCompletedCheckpointID               atomic.Int64
	LastCheckpointDurationMs                atomic.Int64
	LastCheckpointSize                      atomic.Int64
	LastCheckpointFullSize                  atomic.Int64
	// LastCheckpointAlignmentBuffered is the records every subtask held
	// back on blocked channels while aligning the last completed
	// checkpoint's barriers (Flink's lastCheckpointAlignmentBuffered, which
	// counted bytes: Weir's channels carry records, not bytes).
	LastCheckpointAlignmentBuffered atomic.Int64
	mu                              struct {
		sync.Mutex
		subtasks []*Subtask
	}
}

// NewAttempt replaces the job's subtasks with those of a new attempt (a
// restart starts every count of a subtask again from zero, as in Flink,
// whose tasks are new instances).
func (j *Job) NewAttempt(subtasks []*Subtask) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.mu.subtasks = subtasks
}

// Subtasks returns the subtasks of the current attempt, sorted by task
// name and index.
func (j *Job) Subtasks() []*Subtask {
	j.mu.Lock()
	s := append([]*Subtask(nil), j.mu.subtasks...)
	j.mu.Unlock()
	sort.SliceStable(s, func(a, b int) bool {
		if s[a].Task != s[b].Task {
			return s[a].Task < s[b].Task
		}
		return s[a].Index < s[b].Index
	})
	return s
}

// Subtask finds the subtask of the current attempt by task name and
// index, or nil.
func (j *Job) Subtask(task string, index int) *Subtask {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, s := range j.mu.subtasks {
		if s.Task == task && s.Index == index {
			return s
		}
	}
	return nil
}

// Job finds a registered job by id, or nil.
func (r *Registry) Job(id string) *Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, j := range r.mu.jobs {
		if j.ID == id {
			return j
		}
	}
	return nil
}

// Subtask is Flink's task scope: one parallel instance of a job vertex
// (Task is the vertex's name, Flink's task_name) and its chain's
// operators, head first.
type Subtask struct {
	Task      string
	Index     int
	Operators []*Operator
	// RecordsIn counts records taken from input channels — on a source
	// subtask, records its source read —, RecordsOut those the chain's last
	// operator emitted (Flink's task numRecordsIn/Out).
	RecordsIn, RecordsOut atomic.Int64
	// BytesIn counts the bytes the chain's source read from outside,
	// BytesOut those its sinks wrote out (numBytesIn/Out). Records between
	// subtasks are handed over in memory, never serialized, so there are
	// no network bytes to count as Flink's tasks do.
	BytesIn, BytesOut atomic.Int64
	// The same four per second over the last rate window
	// (numRecordsInPerSecond, …).
	RecordsInPerSecond, RecordsOutPerSecond Float
	BytesInPerSecond, BytesOutPerSecond     Float
	// Time: see TimeAccount. The Accumulate* totals are ms since the
	// subtask started (accumulateIdleTime, …); the MsPerSecond ratios are
	// over the last rate window (idleTimeMsPerSecond, …; each 0 to 1000,
	// the three adding up to 1000).
	AccumulateIdleMs, AccumulateBackPressuredMs, AccumulateBusyMs atomic.Int64
	// IdleSince is when (Unix ms) the subtask began a wait it will not
	// wake from to publish (0: none): accumulateIdleTime adds the wait
	// so far to AccumulateIdleMs.
	IdleSince                                                  atomic.Int64
	IdleMsPerSecond, BackPressuredMsPerSecond, BusyMsPerSecond Float
	// BackPressured is set while the subtask waits for an output credit
	// (isBackPressured).
	BackPressured atomic.Bool
	// CheckpointAlignmentNanos is the barrier alignment of the last
	// completed checkpoint (Flink's checkpointAlignmentTime, ns);
	// CheckpointStartDelayNanos the time from its trigger to its first
	// barrier at the subtask, as the subtask measured it (Flink's
	// checkpointStartDelayNanos); CheckpointSize the bytes the subtask
	// wrote for it (Flink's REST checkpointed_size, as a metric);
	// CheckpointFullSize the whole state it names (REST state_size).
	CheckpointAlignmentNanos, CheckpointStartDelayNanos, CheckpointSize atomic.Int64
	CheckpointFullSize                                                  atomic.Int64
	// Tail samples the rows of the vertex for GET …/vertices/:vid/tail:
	// those its chain emits downstream, or those its last operator
	// received when that is a sink (its chain emits nothing).
	Tail Tail
	// DebloatedBufferSize is the batch size, in records, the subtask's
	// buffer debloater last computed for its input channels (Flink's
	// debloatedBufferSize, which is in bytes: Weir's batches are counted
	// in records); EstimatedTimeToConsumeBuffersMs how long the records in
	// flight towards it would take at its measured throughput
	// (estimatedTimeToConsumeBuffersMs). Both 0 with debloating off.
	DebloatedBufferSize, EstimatedTimeToConsumeBuffersMs atomic.Int64
}

// IdleMs is accumulateIdleTime: the published idle ms and the wait in
// progress that the subtask does not wake to publish (see IdleSince).
func (s *Subtask) IdleMs() int64 {
	ms := s.AccumulateIdleMs.Load()
	if since := s.IdleSince.Load(); since > 0 {
		ms += max(0, time.Now().UnixMilli()-since)
	}
	return ms
}

// Operator is Flink's operator scope: one operator of a subtask's chain
// (Name is Flink's operator_name, UID its operator_id).
type Operator struct {
	Name, UID string
	// RecordsIn, RecordsOut: records the operator received and emitted
	// (main output; Flink's numRecordsIn, numRecordsOut).
	RecordsIn, RecordsOut atomic.Int64
	// LateRecordsDropped: late records dropped by a window
	// (numLateRecordsDropped).
	LateRecordsDropped atomic.Int64
	// InputWatermark, OutputWatermark: the last watermark received and
	// emitted, ms (currentInputWatermark, currentOutputWatermark);
	// math.MinInt64 before the first.
	InputWatermark, OutputWatermark atomic.Int64
	// BytesIn: bytes a source read from outside (numBytesIn); BytesOut:
	// bytes a sink wrote out (numBytesOut).
	BytesIn, BytesOut atomic.Int64
	// Commits, LastCommitMs: a sink's commits of completed checkpoints and
	// how long the last took, retries included (numCommits,
	// lastCommitDuration; Weir's).
	Commits, LastCommitMs atomic.Int64
	// StateSize is the operator's live keyed state as its state backend
	// estimates it, bytes (Weir's stateSize; 0 without keyed state),
	// refreshed when a rate window closes. Flink has no such metric for
	// its heap backend; its RocksDB backend's nearest are the native
	// estimate-live-data-size and total-sst-files-size.
	StateSize atomic.Int64
	// custom are the values the operator's connector publishes itself.
	custom customs
}

// NewOperator returns an operator group with no watermark yet.
func NewOperator(name, uid string) *Operator {
	o := &Operator{Name: name, UID: uid}
	o.InputWatermark.Store(minWatermark)
	o.OutputWatermark.Store(minWatermark)
	return o
}

// minWatermark is event.MinWatermark (kept here: metrics imports nothing
// of Weir's).
const minWatermark = -1 << 63
