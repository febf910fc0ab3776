package weir_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
)

// gateSink's writer blocks in its first Write until release is closed.
type gateSink struct {
	started, release chan struct{}
	once             sync.Once
}

func (s *gateSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return gateWriter{s}, nil
}
func (s *gateSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type gateWriter struct{ s *gateSink }

func (w gateWriter) Write(event.Record) error {
	w.s.once.Do(func() { close(w.s.started) })
	<-w.s.release
	return nil
}
func (gateWriter) Flush(bool) error                                   { return nil }
func (gateWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (gateWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (gateWriter) Close() error                                       { return nil }

// TestBackPressureMeasured: a sink that stops writing fills its input
// channel's credits, and the source subtask feeding it waits for a credit:
// while it does, its group says back-pressured (isBackPressured, and the
// vertex in Job.Vertices), and the time it waited is counted as
// back-pressured, the time the sink spent in Write as busy. The test holds
// the sink for at least hold, so each total is at least hold — a lower
// bound the clock guarantees, whatever the machine's speed. The source's
// numRecordsIn is what it read (it was 0 before sources counted it).
func TestBackPressureMeasured(t *testing.T) {
	const n, hold = 20000, 50 * time.Millisecond
	env := apiEnv(t, 1)
	reg := metrics.NewRegistry()
	env.RuntimeOptions().Metrics = reg
	src := weir.FromSlice(env, seqInts(n), "ints", weir.WithUID("ints"))
	sink := &gateSink{started: make(chan struct{}), release: make(chan struct{})}
	keyed := weir.Reduce(weir.KeyBy(src, func(i int) int { return i % 10 }), func(a, b int) int { return b }).UID("last")
	weir.SinkTo(keyed, sink, "gate").UID("gate")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := env.Execute(ctx, t.Name()); done <- err }()
	<-sink.started
	source := waitBackPressured(t, reg, t.Name())
	time.Sleep(hold)
	close(sink.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	j := reg.Job(t.Name())
	var keyedTask *metrics.Subtask
	for _, s := range j.Subtasks() {
		if s.Task != source {
			keyedTask = s
		}
	}
	srcTask := j.Subtask(source, 0)
	if bp := srcTask.AccumulateBackPressuredMs.Load(); bp < hold.Milliseconds() {
		t.Errorf("source accumulateBackPressuredTime = %d ms, want at least the %v the sink was held", bp, hold)
	}
	if busy := keyedTask.AccumulateBusyMs.Load(); busy < hold.Milliseconds() {
		t.Errorf("sink subtask accumulateBusyTime = %d ms, want at least the %v its Write blocked", busy, hold)
	}
	if srcTask.BackPressured.Load() {
		t.Error("source still back-pressured after the job")
	}
	if in := srcTask.Operators[0].RecordsIn.Load(); in != n || srcTask.RecordsIn.Load() != n {
		t.Errorf("source numRecordsIn: operator %d, task %d; want %d (records it read)", in, srcTask.RecordsIn.Load(), n)
	}
	for _, s := range []*metrics.Subtask{srcTask, keyedTask} {
		idle, bp, busy := s.IdleMsPerSecond.Load(), s.BackPressuredMsPerSecond.Load(), s.BusyMsPerSecond.Load()
		if sum := idle + bp + busy; sum < 999 || sum > 1001 || bp > 1000 || idle > 1000 {
			t.Errorf("%s: idle %v + back-pressured %v + busy %v ms/s = %v, want 1000", s.Task, idle, bp, busy, sum)
		}
	}
}

// waitBackPressured waits (at most 20 s) until a subtask of job id is
// back-pressured, checks that Vertices says so too, and returns its task.
func waitBackPressured(t *testing.T, reg *metrics.Registry, id string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if j := reg.Job(id); j != nil {
			for _, s := range j.Subtasks() {
				if !s.BackPressured.Load() {
					continue
				}
				for _, v := range j.Vertices() {
					if v.Task == s.Task && v.BackPressuredSubtasks != 1 {
						t.Errorf("Vertices: %s has %d back-pressured subtasks, want 1", v.Task, v.BackPressuredSubtasks)
					}
				}
				return s.Task
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no subtask back-pressured after 20 s, with the sink blocked")
	return ""
}
