package barrier

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weirstream/weir/event"
)

// Reasons an alignment is abandoned. Aborted.Reason wraps one of them, so a
// caller can classify it with errors.Is.
var (
	// ErrSubsumed: a newer checkpoint's barrier (or cancel-barrier) arrived
	// before this checkpoint's alignment completed, so this one can no longer
	// complete here.
	ErrSubsumed = errors.New("barrier: subsumed")
	// ErrCancelled: an upstream task cancelled the checkpoint and sent a
	// cancel-barrier on one of this task's inputs.
	ErrCancelled = errors.New("barrier: cancelled upstream")
	// ErrAborted: the checkpoint coordinator aborted the checkpoint, e.g.
	// because it timed out or another task declined it.
	ErrAborted = errors.New("barrier: aborted by the checkpoint coordinator")
	// ErrTooManyPending: in AtLeastOnce mode more checkpoints were pending
	// than the handler tracks; the oldest was dropped. Raise the checkpoint
	// interval or lower execution.checkpointing.max-concurrent-checkpoints.
	ErrTooManyPending = errors.New("barrier: too many checkpoints pending alignment")
)

// Aborted names a checkpoint whose alignment this task abandoned, and why.
type Aborted struct {
	ID event.CheckpointID
	// Reason wraps ErrSubsumed, ErrCancelled, ErrAborted or
	// ErrTooManyPending, and says which checkpoint or input caused it.
	Reason error
}

// Decision tells the task what to do after an event. The zero Decision
// means "nothing to do". The task carries out the fields in the order they
// are declared, all of them before it reads its next input element.
type Decision struct {
	// Abort lists checkpoints, oldest first, whose alignment was abandoned:
	// for each, decline it to the coordinator with the reason and forward a
	// cancel-barrier for its id downstream. Usually one entry; two when, for
	// example, a cancel-barrier for a newer checkpoint also ends the
	// alignment of an older one.
	Abort []Aborted
	// Snapshot, when set, says all barriers of this checkpoint are aligned:
	// take the snapshot now, then forward the barrier downstream.
	Snapshot *event.CheckpointBarrier
	// Unaligned marks Snapshot as an unaligned one: take the snapshot now
	// although barriers are still missing, forward the barrier downstream
	// ahead of the output still buffered (persisting that output as the
	// checkpoint's output channel state), and start persisting the input
	// of the channels in Persist. The checkpoint is acknowledged only once
	// ChannelStateDone names it.
	Unaligned bool
	// Persist lists the channels whose input, from now until that
	// channel's barrier for the unaligned Snapshot (or its end of input),
	// belongs to the checkpoint's input channel state: every batch read
	// from them is still processed as usual, and also persisted.
	Persist []int
	// Persisted lists channels that stop being persisted: their barrier of
	// the unaligned checkpoint in progress (or their end) has just been
	// read, and nothing read after it belongs to that checkpoint.
	Persisted []int
	// ChannelStateDone, when not zero, names the unaligned checkpoint whose
	// channel state is now complete (every open channel delivered its
	// barrier): write it and acknowledge the checkpoint.
	ChannelStateDone event.CheckpointID
	// Unblock: resume reading every blocked channel (alignment ended,
	// completed or abandoned). It applies before Block.
	Unblock bool
	// Block lists channels to stop reading from now; their input is held,
	// in order, until a later Unblock. ExactlyOnce mode only.
	Block []int
}

// An Abort entry for an unaligned checkpoint whose channel state is still
// being persisted also ends that persisting: the caller drops what it
// persisted for the checkpoint.

// IsZero reports whether the decision asks for nothing.
func (d Decision) IsZero() bool {
	return len(d.Abort) == 0 && d.Snapshot == nil && len(d.Persisted) == 0 &&
		d.ChannelStateDone == 0 && !d.Unblock && len(d.Block) == 0
}

// String renders the decision on one line for logs, e.g.
// "abort 1 (barrier: subsumed by checkpoint 2); block [0]".
func (d Decision) String() string {
	var parts []string
	for _, a := range d.Abort {
		parts = append(parts, fmt.Sprintf("abort %d (%v)", a.ID, a.Reason))
	}
	if d.Snapshot != nil {
		parts = append(parts, fmt.Sprintf("snapshot %d", d.Snapshot.ID))
	}
	if d.Unaligned {
		parts = append(parts, fmt.Sprintf("unaligned, persist %v", d.Persist))
	}
	if len(d.Persisted) > 0 {
		parts = append(parts, fmt.Sprintf("persisted %v", d.Persisted))
	}
	if d.ChannelStateDone != 0 {
		parts = append(parts, fmt.Sprintf("channel state %d done", d.ChannelStateDone))
	}
	if d.Unblock {
		parts = append(parts, "unblock")
	}
	if len(d.Block) > 0 {
		parts = append(parts, fmt.Sprintf("block %v", d.Block))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}

// then appends what next asks for after d. Callers only combine decisions
// whose order is Abort/Unblock first, then Block or Snapshot, so field order
// stays the order of application.
func (d Decision) then(next Decision) Decision {
	d.Abort = append(d.Abort, next.Abort...)
	if next.Snapshot != nil {
		d.Snapshot, d.Unaligned, d.Persist = next.Snapshot, next.Unaligned, next.Persist
	}
	d.Persisted = append(d.Persisted, next.Persisted...)
	if next.ChannelStateDone != 0 {
		d.ChannelStateDone = next.ChannelStateDone
	}
	d.Unblock = d.Unblock || next.Unblock
	d.Block = append(d.Block, next.Block...)
	return d
}

func subsumedBy(id event.CheckpointID) error {
	return fmt.Errorf("%w by checkpoint %d", ErrSubsumed, id)
}

func subsumedByCancelled(id event.CheckpointID) error {
	return fmt.Errorf("%w by cancelled checkpoint %d", ErrSubsumed, id)
}

func cancelledOn(ch int) error {
	return fmt.Errorf("%w on input %d", ErrCancelled, ch)
}
