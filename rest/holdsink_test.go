package rest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// holdSink's writer holds its subtask until release: in its Write of
// record number at, or (at 0) in its first PrepareCommit, the sink's part
// of a checkpoint's barrier, so that it cannot acknowledge it. A held
// Write stops the records: the subtasks upstream wait for credits.
type holdSink struct {
	at      int64
	n       atomic.Int64
	once    sync.Once
	held    chan event.CheckpointID // the checkpoint held, 0 for a Write
	free    chan struct{}
	release func()
}

// newHoldSink returns a sink holding at record at (0: at the first
// checkpoint), released at the latest when the test ends — before the
// cluster's cleanup, which waits for the job.
func newHoldSink(t *testing.T, at int64) *holdSink {
	s := &holdSink{at: at, held: make(chan event.CheckpointID, 1), free: make(chan struct{})}
	var once sync.Once
	s.release = func() { once.Do(func() { close(s.free) }) }
	t.Cleanup(s.release)
	return s
}

// await waits (at most a minute) until the sink holds, and returns the
// checkpoint it holds (0 for a Write).
func (s *holdSink) await(t *testing.T) event.CheckpointID {
	t.Helper()
	select {
	case id := <-s.held:
		return id
	case <-time.After(time.Minute):
		t.Fatal("the sink was not reached in a minute")
	}
	return 0
}

func (s *holdSink) hold(id event.CheckpointID) {
	s.once.Do(func() {
		s.held <- id
		<-s.free
	})
}

func (s *holdSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return holdWriter{s}, nil
}
func (s *holdSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type holdWriter struct{ s *holdSink }

func (w holdWriter) Write(event.Record) error {
	if w.s.n.Add(1) == w.s.at {
		w.s.hold(0)
	}
	return nil
}
func (holdWriter) Flush(bool) error { return nil }
func (w holdWriter) PrepareCommit(id event.CheckpointID) ([][]byte, error) {
	if w.s.at == 0 {
		w.s.hold(id)
	}
	return nil, nil
}
func (holdWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }
func (holdWriter) Close() error                                     { return nil }
