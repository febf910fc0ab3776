package metrics

import "strings"

// Def is one metric of a scope: its Flink name, what it means, and how to
// read its value from a group. The reporter (metrics/prom) and the REST
// API's metric endpoints both list a scope's metrics from these tables,
// so a metric has one name everywhere.
type Def[G any] struct {
	Name, Help string
	Read       func(G) float64
}

// i64 and f64 read an atomic as a value.
func i64(v interface{ Load() int64 }) float64   { return float64(v.Load()) }
func f64(v interface{ Load() float64 }) float64 { return v.Load() }

// JobDefs are the job scope's metrics (Flink's JobManager job group).
var JobDefs = []Def[*Job]{
	{"numRestarts", "Failovers of the job.", func(j *Job) float64 { return i64(&j.NumRestarts) }},
	{"fullRestarts", "Failovers of the job (each restarts the whole job; Flink's deprecated name).",
		func(j *Job) float64 { return i64(&j.NumRestarts) }},
	{"numberOfCompletedCheckpoints", "Completed checkpoints.", func(j *Job) float64 { return i64(&j.CompletedCheckpoints) }},
	{"numberOfFailedCheckpoints", "Failed checkpoints.", func(j *Job) float64 { return i64(&j.FailedCheckpoints) }},
	{"lastCompletedCheckpointId", "Id of the last completed checkpoint (0: none).",
		func(j *Job) float64 { return i64(&j.LastCompletedCheckpointID) }},
	{"lastCheckpointDuration", "End-to-end duration of the last completed checkpoint, ms.",
		func(j *Job) float64 { return i64(&j.LastCheckpointDurationMs) }},
	{"lastCheckpointSize", "Bytes the last completed checkpoint wrote.", func(j *Job) float64 { return i64(&j.LastCheckpointSize) }},
	{"lastCheckpointFullSize", "Full size of the last completed checkpoint, bytes: what it wrote and the shared files of earlier incremental checkpoints it names.",
		func(j *Job) float64 { return i64(&j.LastCheckpointFullSize) }},
	{"lastCheckpointAlignmentBuffered", "Records held on blocked channels while aligning the last completed checkpoint.",
		func(j *Job) float64 { return i64(&j.LastCheckpointAlignmentBuffered) }},
	{"lastCheckpointRestoreTimestamp", "When the running attempt restored a checkpoint, ms since the epoch (-1: none).",
		func(j *Job) float64 { return i64(&j.LastRestoreTimestamp) }},
}

// TaskDefs are the task scope's metrics (one subtask).
var TaskDefs = []Def[*Subtask]{
	{"numRecordsIn", "Records the subtask took from its input channels (a source subtask: read by its source).",
		func(s *Subtask) float64 { return i64(&s.RecordsIn) }},
	{"numRecordsOut", "Records the subtask's chain emitted.", func(s *Subtask) float64 { return i64(&s.RecordsOut) }},
	{"numBytesIn", "Bytes the subtask's source read from outside.", func(s *Subtask) float64 { return i64(&s.BytesIn) }},
	{"numBytesOut", "Bytes the subtask's sinks wrote out.", func(s *Subtask) float64 { return i64(&s.BytesOut) }},
	{"numRecordsInPerSecond", "numRecordsIn per second over the last 5 s.", func(s *Subtask) float64 { return f64(&s.RecordsInPerSecond) }},
	{"numRecordsOutPerSecond", "numRecordsOut per second over the last 5 s.", func(s *Subtask) float64 { return f64(&s.RecordsOutPerSecond) }},
	{"numBytesInPerSecond", "numBytesIn per second over the last 5 s.", func(s *Subtask) float64 { return f64(&s.BytesInPerSecond) }},
	{"numBytesOutPerSecond", "numBytesOut per second over the last 5 s.", func(s *Subtask) float64 { return f64(&s.BytesOutPerSecond) }},
	{"busyTimeMsPerSecond", "Ms per second the subtask was busy, over the last 5 s.", func(s *Subtask) float64 { return f64(&s.BusyMsPerSecond) }},
	{"backPressuredTimeMsPerSecond", "Ms per second the subtask waited for an output credit, over the last 5 s.",
		func(s *Subtask) float64 { return f64(&s.BackPressuredMsPerSecond) }},
	{"idleTimeMsPerSecond", "Ms per second the subtask waited for input, over the last 5 s.",
		func(s *Subtask) float64 { return f64(&s.IdleMsPerSecond) }},
	{"accumulateBusyTime", "Ms the subtask was busy since it started.", func(s *Subtask) float64 { return i64(&s.AccumulateBusyMs) }},
	{"accumulateBackPressuredTime", "Ms the subtask waited for an output credit since it started.",
		func(s *Subtask) float64 { return i64(&s.AccumulateBackPressuredMs) }},
	{"accumulateIdleTime", "Ms the subtask waited for input since it started.", func(s *Subtask) float64 { return float64(s.IdleMs()) }},
	{"isBackPressured", "1 while the subtask waits for an output credit.", func(s *Subtask) float64 {
		if s.BackPressured.Load() {
			return 1
		}
		return 0
	}},
	{"checkpointAlignmentTime", "Barrier alignment of the last completed checkpoint, ns.",
		func(s *Subtask) float64 { return i64(&s.CheckpointAlignmentNanos) }},
	{"checkpointStartDelayNanos", "Time from the trigger of the last completed checkpoint to its first barrier at the subtask, ns.",
		func(s *Subtask) float64 { return i64(&s.CheckpointStartDelayNanos) }},
	{"lastCheckpointSize", "Bytes the subtask wrote for the last completed checkpoint (with incremental checkpoints, what changed).",
		func(s *Subtask) float64 { return i64(&s.CheckpointSize) }},
	{"debloatedBufferSize", "Batch size, in records, the buffer debloater last computed for the input channels (0: debloating off).",
		func(s *Subtask) float64 { return i64(&s.DebloatedBufferSize) }},
	{"estimatedTimeToConsumeBuffersMs", "Ms the records in flight towards the subtask would take at its measured throughput (0: debloating off).",
		func(s *Subtask) float64 { return i64(&s.EstimatedTimeToConsumeBuffersMs) }},
}

// OperatorDefs are the operator scope's metrics (one operator of a
// subtask's chain); an operator's connector adds its own (Operator.Gauge).
var OperatorDefs = []Def[*Operator]{
	{"numRecordsIn", "Records the operator received (a source: read).", func(o *Operator) float64 { return i64(&o.RecordsIn) }},
	{"numRecordsOut", "Records the operator emitted.", func(o *Operator) float64 { return i64(&o.RecordsOut) }},
	{"numBytesIn", "Bytes a source read from outside.", func(o *Operator) float64 { return i64(&o.BytesIn) }},
	{"numBytesOut", "Bytes a sink wrote out.", func(o *Operator) float64 { return i64(&o.BytesOut) }},
	{"numLateRecordsDropped", "Late records the operator dropped.", func(o *Operator) float64 { return i64(&o.LateRecordsDropped) }},
	{"currentInputWatermark", "Last watermark received, ms (Long.MIN_VALUE: none).",
		func(o *Operator) float64 { return i64(&o.InputWatermark) }},
	{"currentOutputWatermark", "Last watermark emitted, ms (Long.MIN_VALUE: none).",
		func(o *Operator) float64 { return i64(&o.OutputWatermark) }},
	{"numCommits", "Commits of completed checkpoints by a sink.", func(o *Operator) float64 { return i64(&o.Commits) }},
	{"lastCommitDuration", "How long a sink's last commit took, ms, retries included.",
		func(o *Operator) float64 { return i64(&o.LastCommitMs) }},
	{"stateSize", "Live keyed state, bytes, as the state backend estimates it (heap: entries encoded; Pebble: SSTs and memtables).",
		func(o *Operator) float64 { return i64(&o.StateSize) }},
}

// Identifier is the gauge's name with its label values in place, as
// Flink's metric store names a metric of a user group: the gauge
// KafkaSourceReader.topic.partition.records-lag with topic=bills,
// partition=0 is KafkaSourceReader.topic.bills.partition.0.records-lag.
// A label whose key is not a part of the name is appended as key.value.
func (g *Gauge) Identifier() string {
	parts := strings.Split(g.Name, ".")
	groups, name := parts[:len(parts)-1], parts[len(parts)-1]
	used := make([]bool, len(g.Labels)/2)
	var out []string
	for _, p := range groups {
		out = append(out, p)
		for i := 0; i+1 < len(g.Labels); i += 2 {
			if !used[i/2] && g.Labels[i] == p {
				out, used[i/2] = append(out, g.Labels[i+1]), true
				break
			}
		}
	}
	for i := 0; i+1 < len(g.Labels); i += 2 {
		if !used[i/2] {
			out = append(out, g.Labels[i], g.Labels[i+1])
		}
	}
	return strings.Join(append(out, name), ".")
}
