// Package blackhole is Flink's blackhole connector: a sink that discards
// every row (for benchmarks), counting them.
package blackhole

import (
	"sync/atomic"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Sink discards rows; Count is how many it received.
type Sink struct{ Count atomic.Int64 }

// CreateWriter implements operator.Sink.
func (s *Sink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return &writer{s: s}, nil
}

// CreateCommitter implements operator.Sink.
func (s *Sink) CreateCommitter(operator.WriterContext) (operator.Committer, error) { return nil, nil }

type writer struct {
	s *Sink
	n int64
}

func (w *writer) Write(event.Record) error { w.n++; return nil }
func (w *writer) Flush(bool) error {
	w.s.Count.Add(w.n)
	w.n = 0
	return nil
}
func (w *writer) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (w *writer) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (w *writer) Close() error                                       { return w.Flush(true) }
