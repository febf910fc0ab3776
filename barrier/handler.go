package barrier

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
)

// Mode is the checkpointing guarantee a Handler provides, Flink's
// execution.checkpointing.mode: the job's delivery.Guarantee, of which a
// handler takes ExactlyOnce or AtLeastOnce (delivery.None takes no
// checkpoints, so it has no barriers to handle).
type Mode = delivery.Guarantee

const (
	// ExactlyOnce aligns barriers: each channel is blocked from its barrier
	// until all open channels delivered theirs, then the task snapshots.
	ExactlyOnce = delivery.ExactlyOnce
	// AtLeastOnce never blocks: the task snapshots once every open channel
	// delivered the barrier, and records that overtook it are replayed on
	// restore (Flink's CheckpointBarrierTracker).
	AtLeastOnce = delivery.AtLeastOnce
)

// Options configure a Handler beyond its mode and channel count.
type Options struct {
	// Unaligned is Flink's execution.checkpointing.unaligned.enabled
	// (default false): a checkpoint's snapshot is taken at its first
	// barrier, no channel is blocked, and the data each other channel
	// delivers before its barrier is persisted as the checkpoint's channel
	// state (see Decision.Unaligned). ExactlyOnce only. Savepoints are always
	// aligned, as in Flink.
	Unaligned bool
	// AlignedTimeout is Flink's
	// execution.checkpointing.aligned-checkpoint-timeout, used with
	// Unaligned (default 0). Zero: every checkpoint is unaligned from its
	// first barrier. Positive: a checkpoint starts aligned and switches to
	// unaligned once this long has passed since it was triggered (the
	// barrier's Timestamp; its first barrier here when that is zero), as in
	// Flink: checked on every event and on Tick, so a first barrier that
	// arrives after the timeout (it waited behind data) snapshots unaligned
	// at once.
	AlignedTimeout time.Duration
}

// strategy is the mode-specific half of a Handler. OnEndOfInput reaches it
// only for a channel that has just finished.
type strategy interface {
	barrier(now time.Time, ch int, b event.CheckpointBarrier) Decision
	cancel(ch int, id event.CheckpointID) Decision
	endOfInput(now time.Time, ch int) Decision
	abort(id event.CheckpointID) Decision
	tick(now time.Time) Decision
	overtakes(now time.Time, b event.CheckpointBarrier) bool
	blocked(ch int) bool
	progress() *alignment // the alignment to report progress on, or nil
	lastAlignment() time.Duration
}

// Handler aligns the checkpoint barriers of one task's input channels. It is
// not safe for concurrent use: the task's goroutine owns it. See the package
// documentation for what the caller must do with each Decision.
type Handler struct {
	mode  Mode
	in    *inputs
	strat strategy
}

// New returns a handler for a task with numChannels input channels, numbered
// 0..numChannels-1. It panics if numChannels < 1 or mode is neither
// ExactlyOnce nor AtLeastOnce (delivery.None has no barriers): both
// are bugs in the caller.
func New(mode Mode, numChannels int) *Handler {
	return NewWithOptions(mode, numChannels, Options{})
}

// NewWithOptions is New with unaligned checkpoints configured. It panics on
// Unaligned in AtLeastOnce mode or a negative AlignedTimeout: the job's
// options are validated before a handler is made, so both are bugs.
func NewWithOptions(mode Mode, numChannels int, o Options) *Handler {
	if o.Unaligned && mode != ExactlyOnce {
		panic("barrier: unaligned checkpoints need ExactlyOnce mode")
	}
	if o.AlignedTimeout < 0 {
		panic(fmt.Sprintf("barrier: negative aligned-checkpoint timeout %v", o.AlignedTimeout))
	}
	if numChannels < 1 {
		panic(fmt.Sprintf("barrier: New needs at least one input channel, got %d", numChannels))
	}
	in := &inputs{finished: make([]bool, numChannels), nOpen: numChannels}
	h := &Handler{mode: mode, in: in}
	switch mode {
	case ExactlyOnce:
		h.strat = newAligner(in, o)
	case AtLeastOnce:
		h.strat = newTracker(in)
	default:
		panic(fmt.Sprintf("barrier: no barrier handling for mode %v", mode))
	}
	return h
}

// Mode returns the mode the handler was created with.
func (h *Handler) Mode() Mode { return h.mode }

// OnBarrier handles checkpoint barrier b read from channel ch at time now.
func (h *Handler) OnBarrier(now time.Time, ch int, b event.CheckpointBarrier) Decision {
	h.check(ch)
	return h.strat.barrier(now, ch, b)
}

// OnCancelBarrier handles a cancel-barrier for checkpoint id read from
// channel ch: an upstream task abandoned that checkpoint. The time is
// accepted for symmetry with the other events; cancelling measures nothing.
func (h *Handler) OnCancelBarrier(now time.Time, ch int, id event.CheckpointID) Decision {
	h.check(ch)
	return h.strat.cancel(ch, id)
}

// OnEndOfInput handles the end of channel ch. From now on the channel counts
// as arrived for the checkpoint being aligned and for every later one, so its
// end may complete an alignment. A second end on the same channel is ignored.
func (h *Handler) OnEndOfInput(now time.Time, ch int) Decision {
	h.check(ch)
	if !h.in.finish(ch) {
		return Decision{}
	}
	return h.strat.endOfInput(now, ch)
}

// OnAbort handles the coordinator's abort of checkpoint id (for example on
// timeout). An alignment in progress for id is abandoned; if no barrier of id
// has arrived yet, its barriers are not aligned when they come.
func (h *Handler) OnAbort(id event.CheckpointID) Decision {
	return h.strat.abort(id)
}

// Tick tells the handler the time is now, so that an aligned checkpoint
// triggered longer than Options.AlignedTimeout ago switches to
// unaligned even while no control event arrives. The task calls it on every
// processing-time wake-up; without an aligned timeout it never decides
// anything.
func (h *Handler) Tick(now time.Time) Decision {
	return h.strat.tick(now)
}

// Overtakes reports whether barrier b, read at time now from a channel
// whose data before it the task has read ahead but not yet processed, is to
// be handled at once, ahead of that data: b would take an unaligned snapshot
// (a new checkpoint with an aligned timeout of 0, or one triggered at least
// the timeout before now) or is the barrier of the unaligned checkpoint whose
// channel state is being persisted. Any other barrier must be handled in
// order, after the data before it. The caller passes the same now to
// OnBarrier.
func (h *Handler) Overtakes(now time.Time, b event.CheckpointBarrier) bool {
	return h.strat.overtakes(now, b)
}

// Blocked reports whether channel ch is blocked. Always false in AtLeastOnce.
func (h *Handler) Blocked(ch int) bool {
	h.check(ch)
	return h.strat.blocked(ch)
}

// Pending describes the alignment in progress, for progress reports such as
// "checkpoint 7: waiting for barrier on inputs 0,2 for 3s": the checkpoint
// id, the channels that delivered its barrier, the open channels still
// awaited, and when its first barrier arrived. ok is false when nothing is
// being aligned. In AtLeastOnce mode it describes the oldest pending
// checkpoint.
func (h *Handler) Pending() (id event.CheckpointID, arrived []int, missing []int, since time.Time, ok bool) {
	a := h.strat.progress()
	if a == nil {
		return 0, nil, nil, time.Time{}, false
	}
	arrived, missing = a.report(h.in)
	return a.id(), arrived, missing, a.since, true
}

// LastAlignmentDuration returns how long the last completed alignment took,
// from its first barrier to its last (zero before the first completes, and
// for a single channel). Abandoned alignments do not change it. For an
// unaligned snapshot it is the time spent aligned before the switch: zero
// when unaligned from the start.
func (h *Handler) LastAlignmentDuration() time.Duration {
	return h.strat.lastAlignment()
}

func (h *Handler) check(ch int) {
	if ch < 0 || ch >= len(h.in.finished) {
		panic(fmt.Sprintf("barrier: channel %d out of range [0, %d)", ch, len(h.in.finished)))
	}
}
