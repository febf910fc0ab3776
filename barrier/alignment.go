package barrier

import (
	"time"

	"github.com/weirstream/weir/event"
)

// alignment tracks which channels delivered the barrier of one checkpoint.
type alignment struct {
	barrier event.CheckpointBarrier
	since   time.Time // when the first barrier arrived
	// triggered is when the coordinator triggered the checkpoint (the
	// barrier's Timestamp), or since when the barrier carries none: the
	// aligned timeout counts from it, as Flink's does.
	triggered time.Time
	arrived   []bool
	// remaining counts channels that neither delivered the barrier nor
	// finished; the alignment is complete when it reaches zero.
	remaining int
	// unaligned is set once the snapshot was taken unaligned: the channels
	// still missing are being persisted, and none is blocked.
	unaligned bool
}

func newAlignment(now time.Time, b event.CheckpointBarrier, in *inputs) *alignment {
	return &alignment{
		barrier:   b,
		since:     now,
		triggered: triggerTime(now, b),
		arrived:   make([]bool, len(in.finished)),
		remaining: in.nOpen,
	}
}

// triggerTime is the checkpoint's trigger time carried by b, or now when b
// carries none (a zero Timestamp).
func triggerTime(now time.Time, b event.CheckpointBarrier) time.Time {
	if b.Timestamp <= 0 {
		return now
	}
	return time.UnixMilli(b.Timestamp)
}

func (a *alignment) id() event.CheckpointID { return a.barrier.ID }

func (a *alignment) done() bool { return a.remaining == 0 }

// arrive records ch's barrier. It reports false for a second barrier on the
// same channel, which a correct upstream never sends. A finished channel was
// already counted as arrived, so its barrier does not lower remaining.
func (a *alignment) arrive(ch int, in *inputs) bool {
	if a.arrived[ch] {
		return false
	}
	a.arrived[ch] = true
	if !in.finished[ch] {
		a.remaining--
	}
	return true
}

// finish counts a channel that has just ended as arrived. Called once per
// channel, when its end of input is read. It reports whether ch was still
// awaited.
func (a *alignment) finish(ch int) bool {
	if a.arrived[ch] {
		return false
	}
	a.remaining--
	return true
}

// report lists the channels that delivered the barrier and the open ones
// still awaited. Finished channels that sent no barrier are in neither.
func (a *alignment) report(in *inputs) (arrived, missing []int) {
	for ch, ok := range a.arrived {
		switch {
		case ok:
			arrived = append(arrived, ch)
		case !in.finished[ch]:
			missing = append(missing, ch)
		}
	}
	return arrived, missing
}

// inputs is the state of the task's input channels shared by both modes.
type inputs struct {
	finished []bool
	nOpen    int // channels not finished
}

// finish marks ch finished; it reports false if it already was.
func (in *inputs) finish(ch int) bool {
	if in.finished[ch] {
		return false
	}
	in.finished[ch] = true
	in.nOpen--
	return true
}

// abortSet remembers checkpoints the coordinator aborted before their first
// barrier reached this task, so their barriers are not aligned when they
// come. Entries at or below the handler's newest id are dropped.
type abortSet map[event.CheckpointID]struct{}

func (s abortSet) add(id event.CheckpointID) { s[id] = struct{}{} }

// take reports whether id was aborted, forgetting it.
func (s abortSet) take(id event.CheckpointID) bool {
	_, ok := s[id]
	delete(s, id)
	return ok
}

// prune forgets every id at or below upTo: barriers for them are stale anyway.
func (s abortSet) prune(upTo event.CheckpointID) {
	for id := range s {
		if id <= upTo {
			delete(s, id)
		}
	}
}

// stopwatch remembers how long the last completed alignment took.
type stopwatch struct{ last time.Duration }

func (s *stopwatch) lastAlignment() time.Duration { return s.last }

func (s *stopwatch) record(now time.Time, a *alignment) { s.last = now.Sub(a.since) }
