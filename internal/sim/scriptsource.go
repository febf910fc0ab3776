package sim

import (
	"context"
	"encoding/binary"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// ScriptStep is one step of a ScriptSource: emit Values (with event times TS),
// then wait Pause before the next step.
type ScriptStep struct {
	Values []any
	TS     []int64
	Pause  time.Duration
}

// ScriptSource is a bounded single-split source that plays its steps in
// order; pauses let periodic watermarks happen between steps, so a test
// can make records late on purpose. Its position is the next step index.
type ScriptSource struct{ Steps []ScriptStep }

// Bounded implements operator.Source.
func (s *ScriptSource) Bounded() bool { return true }

// Enumerate returns the single split.
func (s *ScriptSource) Enumerate(context.Context) ([]operator.SplitState, error) {
	return []operator.SplitState{{ID: "script", Position: binary.AppendUvarint(nil, 0)}}, nil
}

// AssignSplit gives the split to reader 0.
func (s *ScriptSource) AssignSplit(string, int) int { return 0 }

// CreateReader implements operator.Source.
func (s *ScriptSource) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &scriptReader{src: s, ready: closedChan()}, nil
}

type scriptReader struct {
	src   *ScriptSource
	next  int
	has   bool
	ready chan struct{}
}

func (r *scriptReader) AddSplits(ss []operator.SplitState) error {
	for _, s := range ss {
		p, _ := binary.Uvarint(s.Position)
		r.next, r.has = int(p), true
	}
	return nil
}

func (r *scriptReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if !r.has || r.next >= len(r.src.Steps) {
		return operator.EndOfInput, nil
	}
	st := r.src.Steps[r.next]
	for i, v := range st.Values {
		out.Collect("script", event.Record{Value: v, Timestamp: st.TS[i]})
	}
	r.next++
	if r.next == len(r.src.Steps) {
		operator.ReportSplitFinished(out, "script")
	}
	r.ready = make(chan struct{})
	ready := r.ready
	time.AfterFunc(st.Pause, func() { close(ready) })
	return operator.NothingAvailable, nil
}

func (r *scriptReader) Available() <-chan struct{} { return r.ready }

func (r *scriptReader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	if !r.has {
		return nil, nil
	}
	return []operator.SplitState{{ID: "script", Position: binary.AppendUvarint(nil, uint64(r.next))}}, nil
}

func (r *scriptReader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *scriptReader) Close() error                                      { return nil }
