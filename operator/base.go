package operator

import (
	"github.com/weirstream/weir/event"
)

// Base implements every Operator method with the default behaviour:
// records are dropped, watermarks fire timers and are forwarded, keyed,
// operator and timer state are snapshotted and restored. Embed it and
// override ProcessElement (and whatever else the operator needs).
type Base struct {
	Ctx *Context
	// restored holds parts handed to InitializeState until Open has the
	// backends to put them in.
	restored map[string][][]byte
}

// Open keeps ctx and restores state handed to InitializeState.
func (b *Base) Open(ctx *Context) error {
	b.Ctx = ctx
	if b.restored == nil {
		return nil
	}
	return b.restoreParts(b.restored)
}

func (b *Base) restoreParts(parts map[string][][]byte) error {
	c := b.Ctx
	if blobs := parts[PartKeyed]; c.Keyed != nil && len(blobs) > 0 {
		if err := c.Keyed.Restore(blobs); err != nil {
			return err
		}
	}
	if blobs := parts[PartOperator]; c.OperatorState != nil && len(blobs) > 0 {
		if err := c.OperatorState.Restore(blobs, c.Subtask.Index, c.Parallelism); err != nil {
			return err
		}
	}
	if blobs := parts[PartTimers]; c.Timers != nil && len(blobs) > 0 {
		return c.Timers.Restore(blobs)
	}
	return nil
}

// ProcessElement drops r.
func (b *Base) ProcessElement(event.Record) error { return nil }

// ProcessWatermark fires due event-time timers and forwards wm.
func (b *Base) ProcessWatermark(wm event.Timestamp) error {
	if b.Ctx.Timers != nil {
		if err := b.Ctx.Timers.AdvanceWatermark(wm); err != nil {
			return err
		}
	}
	b.Ctx.Output.EmitWatermark(wm)
	return nil
}

// PrepareSnapshotPreBarrier does nothing.
func (b *Base) PrepareSnapshotPreBarrier(event.CheckpointID) error { return nil }

// Part names used by Base.
const (
	PartKeyed    = "keyed"
	PartOperator = "operator"
	PartTimers   = "timers"
)

// SnapshotState captures keyed state, operator state and timers.
func (b *Base) SnapshotState(event.CheckpointID) ([]Part, error) {
	c := b.Ctx
	var parts []Part
	if c.Keyed != nil {
		s, err := c.Keyed.Snapshot(c.Now())
		if err != nil {
			return nil, err
		}
		parts = append(parts, Part{Name: PartKeyed, Snap: s})
	}
	if c.OperatorState != nil {
		s, err := c.OperatorState.Snapshot()
		if err != nil {
			return nil, err
		}
		parts = append(parts, Part{Name: PartOperator, Snap: s})
	}
	if c.Timers != nil {
		parts = append(parts, Part{Name: PartTimers, Snap: c.Timers.Snapshot()})
	}
	return parts, nil
}

// InitializeState keeps parts until Open.
func (b *Base) InitializeState(parts map[string][][]byte) error {
	b.restored = parts
	return nil
}

// NotifyCheckpointComplete does nothing.
func (b *Base) NotifyCheckpointComplete(event.CheckpointID) error { return nil }

// NotifyCheckpointAborted does nothing.
func (b *Base) NotifyCheckpointAborted(event.CheckpointID) error { return nil }

// Finish does nothing.
func (b *Base) Finish() error { return nil }

// Close does nothing.
func (b *Base) Close() error { return nil }
