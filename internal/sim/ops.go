package sim

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
)

// CrashOp passes records through and crashes, as Faults decide, while
// processing ("process"), snapshotting ("snapshot"), restoring ("restore")
// and being notified ("notify").
type CrashOp struct {
	operator.Base
	Faults *Faults
	// SlowSubtask, when ≥ 0, makes that subtask pause SlowFor every
	// SlowEvery records, so its output channels back up and barriers reach
	// downstream tasks out of step: alignment has real work to do.
	SlowSubtask, SlowEvery int
	SlowFor                time.Duration
	// Halt, if set and true, fails every record and snapshot: a test
	// stops a job right after a checkpoint it chose, so that the job's
	// latest checkpoint is that one.
	Halt *atomic.Bool
	n    int
}

var errHalted = errors.New("sim: halted by the test")

// InitializeState may crash, then keeps the parts.
func (c *CrashOp) InitializeState(parts map[string][][]byte) error {
	if err := c.Faults.Maybe("restore"); err != nil {
		return err
	}
	return c.Base.InitializeState(parts)
}

// ProcessElement may crash, then forwards r.
func (c *CrashOp) ProcessElement(r event.Record) error {
	if err := c.Faults.Maybe("process"); err != nil {
		return err
	}
	if c.Halt != nil && c.Halt.Load() {
		return errHalted
	}
	c.n++
	if c.Ctx.Subtask.Index == c.SlowSubtask && c.SlowEvery > 0 && c.n%c.SlowEvery == 0 {
		time.Sleep(c.SlowFor)
	}
	c.Ctx.Output.Collect(r)
	return nil
}

// SnapshotState may crash.
func (c *CrashOp) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	if err := c.Faults.Maybe("snapshot"); err != nil {
		return nil, err
	}
	if c.Halt != nil && c.Halt.Load() {
		return nil, errHalted
	}
	return c.Base.SnapshotState(id)
}

// NotifyCheckpointComplete may crash.
func (c *CrashOp) NotifyCheckpointComplete(id event.CheckpointID) error {
	return c.Faults.Maybe("notify")
}

// Violations counts what sequence checkers saw: gaps (a sequence number
// skipped: loss) and repeats (one seen again: duplicate processing).
type Violations struct {
	Gaps, Repeats atomic.Int64
}

// SeqChecker is a keyed operator that keeps the last sequence number per key
// in keyed state and counts every gap or repeat, then forwards the record.
// In exactly-once mode, state and input agree after any restore, so it must
// count none.
type SeqChecker struct {
	operator.Base
	V    *Violations
	last state.ValueState[int]
}

// Open registers the state.
func (s *SeqChecker) Open(ctx *operator.Context) error {
	if err := s.Base.Open(ctx); err != nil {
		return err
	}
	s.last = state.Value(ctx.Keyed, state.ValueDescriptor[int]{Name: "last-seq"})
	return nil
}

// ProcessElement checks r against the key's last sequence number.
func (s *SeqChecker) ProcessElement(r event.Record) error {
	s.Ctx.SetCurrentKeyOf(r.Value)
	q := r.Value.(Seq)
	last, ok := s.last.Value()
	if !ok {
		last = -1
	}
	switch {
	case q.Seq > last+1:
		s.V.Gaps.Add(1)
	case q.Seq <= last:
		s.V.Repeats.Add(1)
	}
	if q.Seq > last {
		s.last.Update(q.Seq)
	}
	s.Ctx.Output.Collect(r)
	return nil
}
