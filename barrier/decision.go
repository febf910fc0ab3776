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
	// Unblock: resume reading every blocked channel (alignment ended,
	// completed or abandoned). It applies before Block.
	Unblock bool
	// Block lists channels to stop reading from now; their input is held,
	// in order, until a later Unblock. ExactlyOnce mode only.
	Block []int
}

// IsZero reports whether the decision asks for nothing.
func (d Decision) IsZero() bool {
	return len(d.Abort) == 0 && d.Snapshot == nil && !d.Unblock && len(d.Block) == 0
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
		d.Snapshot = next.Snapshot
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
