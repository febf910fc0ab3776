package main

import (
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/weirstream/weir/checkpoint"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/planner"
)

// Sample is one point of a run's progress: seconds since the job was
// submitted, events the sources had emitted, and the process's CPU
// seconds since submission. Both engines report them (Weir's child from
// its metrics registry and rusage, Flink's RunQuery from its readers and
// the JVM's process CPU); the parent derives throughput over time and the
// steady-state rate from them (timeline.go).
type Sample [3]float64

// T, Events and CPU name the sample's fields.
func (s Sample) T() float64      { return s[0] }
func (s Sample) Events() float64 { return s[1] }
func (s Sample) CPU() float64    { return s[2] }

// CheckpointInfo is one completed checkpoint: id, duration in ms and the
// bytes every subtask wrote for it (for an incremental checkpoint, the
// new files only), as Flink's lastCheckpointDuration and
// lastCheckpointSize report them. Weir's add where the time went, each
// the largest over the subtasks, in ms: the start delay (trigger to the
// first barrier, Flink's checkpoint_start_delay), the alignment, the
// synchronous and the asynchronous part. Flink's have only the first three.
type CheckpointInfo [7]int64

// Indexes of CheckpointInfo's fields.
const (
	ckID = iota
	ckMs
	ckBytes
	ckStartDelayMs
	ckAlignMs
	ckSyncMs
	ckAsyncMs
)

// sampler samples a Weir job's sources every interval.
type sampler struct {
	reg      *metrics.Registry
	start    time.Time
	cpu0     float64
	interval time.Duration

	mu      sync.Mutex
	samples []Sample
	stop    chan struct{}
	done    chan struct{}
}

func newSampler(reg *metrics.Registry, interval time.Duration) *sampler {
	if interval <= 0 {
		interval = 5 * time.Second
	}
	return &sampler{reg: reg, start: time.Now(), cpu0: selfCPU(), interval: interval,
		stop: make(chan struct{}), done: make(chan struct{})}
}

func (s *sampler) run() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.sample()
		}
	}
}

// finish stops sampling and takes the last sample, at the job's end.
func (s *sampler) finish() []Sample {
	close(s.stop)
	<-s.done
	s.sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.samples
}

func (s *sampler) sample() {
	smp := Sample{time.Since(s.start).Seconds(), float64(sourceEvents(s.reg)), selfCPU() - s.cpu0}
	s.mu.Lock()
	s.samples = append(s.samples, smp)
	s.mu.Unlock()
}

// sourceEvents is the events the job's generator sources emitted: the
// records out of every "Source: …" operator, averaged over the source
// nodes (a query that scans the generator twice reads the stream twice;
// Flink reuses the source, so its count is of one reading).
func sourceEvents(reg *metrics.Registry) int64 {
	perNode := map[string]int64{}
	for _, j := range reg.Jobs() {
		for _, st := range j.Subtasks() {
			for _, op := range st.Operators {
				if strings.HasPrefix(op.Name, "Source: ") && op.Name != "Source: Values" {
					perNode[op.UID] += op.RecordsOut.Load()
				}
			}
		}
	}
	if len(perNode) == 0 {
		return 0
	}
	var sum int64
	for _, n := range perNode {
		sum += n
	}
	return sum / int64(len(perNode))
}

// selfCPU is this process's user + system CPU seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return cpuOf(&ru)
}

// completedCheckpoints lists the completed checkpoints of a run.
func completedCheckpoints(stats []checkpoint.CheckpointStats) []CheckpointInfo {
	var out []CheckpointInfo
	for _, c := range stats {
		if c.Status != checkpoint.StatusCompleted {
			continue
		}
		ci := CheckpointInfo{ckID: int64(c.ID), ckMs: c.Duration.Milliseconds()}
		for _, t := range c.Tasks {
			m := t.Metrics
			ci[ckBytes] += m.Bytes
			delay := t.AckLatency - m.AlignmentDuration - m.SyncDuration - m.AsyncDuration
			ci[ckStartDelayMs] = max(ci[ckStartDelayMs], delay.Milliseconds())
			ci[ckAlignMs] = max(ci[ckAlignMs], m.AlignmentDuration.Milliseconds())
			ci[ckSyncMs] = max(ci[ckSyncMs], m.SyncDuration.Milliseconds())
			ci[ckAsyncMs] = max(ci[ckAsyncMs], m.AsyncDuration.Milliseconds())
		}
		out = append(out, ci)
	}
	return out
}

// rowCounter is the benchmark's 'blackhole': it counts the result rows,
// net (+I and +U add one, -U and -D take one away: the size of the final
// result, however the updates were batched) and all changes. bench/flink's
// 'weir-count' sink counts the same, so the two engines' counts compare.
type rowCounter struct{ rows, changes atomic.Int64 }

func (c *rowCounter) factory(*catalog.Table) (planner.SinkSpec, error) {
	return planner.SinkSpec{Sink: c, AcceptsUpdates: true}, nil
}

func (c *rowCounter) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return &countWriter{c: c}, nil
}

func (c *rowCounter) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type countWriter struct {
	c             *rowCounter
	rows, changes int64
}

func (w *countWriter) Write(r event.Record) error {
	w.changes++
	if row, ok := r.Value.(event.Row); ok && (row.Kind == event.UpdateBefore || row.Kind == event.Delete) {
		w.rows--
	} else {
		w.rows++
	}
	return nil
}

func (w *countWriter) Flush(bool) error {
	w.c.rows.Add(w.rows)
	w.c.changes.Add(w.changes)
	w.rows, w.changes = 0, 0
	return nil
}

func (w *countWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, w.Flush(false) }
func (w *countWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (w *countWriter) Close() error                                       { return w.Flush(true) }
