package operator

import (
	"container/heap"

	"github.com/weirstream/weir/event"
)

// ProcessingTimeCallback runs when processing time reaches the time it was
// registered for; now is the processing time (ms) of the wake-up that runs
// it, which may be later.
type ProcessingTimeCallback func(now event.Timestamp) error

// ProcessingTimeService runs callbacks at processing times, for every
// operator of a subtask, keyed or not (Flink's ProcessingTimeService).
// Unlike the timers of a TimerService, callbacks are not state: they are
// not checkpointed, and they are dropped when the subtask stops. The keyed
// timer services of the chain ride on it too (TimerService.UseProcessingTime),
// so a subtask has one wake-up path for processing time.
//
// It is a pure state machine: the subtask's goroutine registers callbacks
// (through operators) and calls Advance with the current time from its
// mailbox loop; callbacks run inside Advance, on that goroutine, so what
// they emit goes through the operator's Output exactly as from
// ProcessElement, in mailbox order with records, watermarks and barriers.
type ProcessingTimeService struct {
	queue    callbackHeap
	seq      uint64
	quiesced bool
}

// ProcessingTimer is a registered callback; Cancel removes it.
type ProcessingTimer struct {
	s     *ProcessingTimeService
	ts    event.Timestamp
	seq   uint64 // registration order: ties at one time fire in it
	cb    ProcessingTimeCallback
	index int  // in the heap; -1 once due, cancelled or dropped
	dead  bool // cancelled, or quiesced away: never runs
}

// NewProcessingTimeService returns a service with no callbacks.
func NewProcessingTimeService() *ProcessingTimeService { return &ProcessingTimeService{} }

// RegisterTimer makes cb run once processing time reaches ts (a time
// already past runs at the next wake-up). After Quiesce it registers
// nothing and returns a timer that never fires.
func (s *ProcessingTimeService) RegisterTimer(ts event.Timestamp, cb ProcessingTimeCallback) *ProcessingTimer {
	t := &ProcessingTimer{s: s, ts: ts, seq: s.seq, cb: cb, index: -1, dead: s.quiesced}
	s.seq++
	if !t.dead {
		heap.Push(&s.queue, t)
	}
	return t
}

// Cancel makes sure the timer does not fire if it has not yet: even when
// it is due in the Advance that runs the canceller. Cancelling a fired or
// cancelled timer, or a nil one, does nothing.
func (t *ProcessingTimer) Cancel() {
	if t == nil {
		return
	}
	t.dead = true
	if t.index >= 0 {
		heap.Remove(&t.s.queue, t.index)
	}
}

// Time is the processing time the timer was registered for.
func (t *ProcessingTimer) Time() event.Timestamp { return t.ts }

// Next is the earliest registered time, or event.MaxWatermark when there is
// none: the subtask need not wake before it.
func (s *ProcessingTimeService) Next() event.Timestamp {
	if len(s.queue) == 0 {
		return event.MaxWatermark
	}
	return s.queue[0].ts
}

// Len is the number of callbacks waiting.
func (s *ProcessingTimeService) Len() int { return len(s.queue) }

// Advance runs, in time order (ties in registration order), every callback
// registered for now or earlier, and stops at the first error. A callback
// registered while Advance runs waits for the next call even when it is
// due: a callback that re-registers itself for "now" cannot spin the
// mailbox. A callback cancelled by an earlier one in the same call does not run.
func (s *ProcessingTimeService) Advance(now event.Timestamp) error {
	var due []*ProcessingTimer
	for len(s.queue) > 0 && s.queue[0].ts <= now {
		due = append(due, heap.Pop(&s.queue).(*ProcessingTimer))
	}
	for i, t := range due {
		if t.dead || s.quiesced {
			continue // cancelled by an earlier callback of this call
		}
		t.dead = true
		if err := t.cb(now); err != nil {
			s.requeue(due[i+1:])
			return err
		}
	}
	return nil
}

// requeue puts back callbacks that were due but did not run because an
// earlier one failed (the subtask fails anyway; this keeps Len honest).
func (s *ProcessingTimeService) requeue(ts []*ProcessingTimer) {
	for _, t := range ts {
		if !t.dead {
			heap.Push(&s.queue, t)
		}
	}
}

// Quiesce drops every callback and makes later registrations no-ops: the
// subtask is stopping (Flink's quiesce).
func (s *ProcessingTimeService) Quiesce() {
	for _, t := range s.queue {
		t.index, t.dead = -1, true
	}
	s.queue, s.quiesced = nil, true
}

// callbackHeap orders timers by time, then registration.
type callbackHeap []*ProcessingTimer

func (h callbackHeap) Len() int { return len(h) }
func (h callbackHeap) Less(i, j int) bool {
	if h[i].ts != h[j].ts {
		return h[i].ts < h[j].ts
	}
	return h[i].seq < h[j].seq
}
func (h callbackHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *callbackHeap) Push(x any) {
	t := x.(*ProcessingTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *callbackHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
