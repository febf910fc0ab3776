package barrier

import (
	"cmp"
	"slices"
	"time"

	"github.com/weirstream/weir/event"
)

// maxTracked bounds how many checkpoints an AtLeastOnce handler tracks at
// once, as Flink's CheckpointBarrierTracker does. Without a bound, a channel
// that stops delivering barriers would make the list grow without limit.
const maxTracked = 50

// tracker is the AtLeastOnce strategy: it never blocks, and tracks several
// checkpoints at once because a fast channel may deliver the barriers of
// later checkpoints before a slow one delivers the first.
type tracker struct {
	stopwatch
	in      *inputs
	pending []*alignment // ascending ids
	// newest is the newest id seen in a barrier or cancel-barrier; a barrier
	// at or below it that is not pending is stale.
	newest  event.CheckpointID
	aborted abortSet
	limit   int
}

func newTracker(in *inputs) *tracker {
	return &tracker{in: in, aborted: abortSet{}, limit: maxTracked}
}

func (t *tracker) barrier(now time.Time, ch int, b event.CheckpointBarrier) Decision {
	if i, ok := t.find(b.ID); ok {
		return t.arrive(now, i, ch)
	}
	if b.ID <= t.newest {
		return Decision{}
	}
	if t.advance(b.ID) {
		return Decision{Abort: []Aborted{{ID: b.ID, Reason: ErrAborted}}}
	}
	d := t.makeRoom()
	t.pending = append(t.pending, newAlignment(now, b, t.in))
	return d.then(t.arrive(now, len(t.pending)-1, ch))
}

func (t *tracker) arrive(now time.Time, i, ch int) Decision {
	a := t.pending[i]
	if !a.arrive(ch, t.in) || !a.done() {
		return Decision{}
	}
	return t.complete(now, i)
}

// complete snapshots pending[i]. The older pending checkpoints are
// abandoned: the newer snapshot covers every record they would have.
func (t *tracker) complete(now time.Time, i int) Decision {
	a := t.pending[i]
	d := Decision{Abort: t.abortFirst(i, subsumedBy(a.id()))}
	t.pending = t.pending[1:]
	t.record(now, a)
	b := a.barrier
	d.Snapshot = &b
	return d
}

// abortFirst removes the n oldest pending checkpoints, reporting each.
func (t *tracker) abortFirst(n int, reason error) []Aborted {
	var out []Aborted
	for _, a := range t.pending[:n] {
		out = append(out, Aborted{ID: a.id(), Reason: reason})
	}
	t.pending = t.pending[n:]
	return out
}

func (t *tracker) makeRoom() Decision {
	if len(t.pending) < t.limit {
		return Decision{}
	}
	return Decision{Abort: t.abortFirst(1, ErrTooManyPending)}
}

// cancel abandons id and, as Flink does, every older pending checkpoint:
// channel ch has moved past them and may never deliver their barriers.
func (t *tracker) cancel(ch int, id event.CheckpointID) Decision {
	i, found := t.find(id)
	d := Decision{Abort: t.abortFirst(i, subsumedByCancelled(id))}
	switch {
	case found:
		t.pending = t.pending[1:]
	case id > t.newest:
		t.advance(id)
	default:
		return d // id was already snapshotted or abandoned here
	}
	d.Abort = append(d.Abort, Aborted{ID: id, Reason: cancelledOn(ch)})
	return d
}

// endOfInput counts ch as arrived everywhere; the newest checkpoint that
// this completes is snapshotted (and subsumes the older ones).
func (t *tracker) endOfInput(now time.Time, ch int) Decision {
	for _, a := range t.pending {
		a.finish(ch)
	}
	for i := len(t.pending) - 1; i >= 0; i-- {
		if t.pending[i].done() {
			return t.complete(now, i)
		}
	}
	return Decision{}
}

func (t *tracker) abort(id event.CheckpointID) Decision {
	if i, ok := t.find(id); ok {
		t.pending = slices.Delete(t.pending, i, i+1)
		return Decision{Abort: []Aborted{{ID: id, Reason: ErrAborted}}}
	}
	if id > t.newest {
		t.aborted.add(id)
	}
	return Decision{}
}

// find returns the index of id in pending, or where it would be inserted.
func (t *tracker) find(id event.CheckpointID) (int, bool) {
	return slices.BinarySearchFunc(t.pending, id, func(a *alignment, id event.CheckpointID) int {
		return cmp.Compare(a.id(), id)
	})
}

// advance makes id the newest checkpoint seen. It reports whether the
// coordinator aborted id before any of its barriers reached this task.
func (t *tracker) advance(id event.CheckpointID) bool {
	t.newest = id
	wasAborted := t.aborted.take(id)
	t.aborted.prune(id)
	return wasAborted
}

func (t *tracker) blocked(int) bool { return false }

func (t *tracker) tick(time.Time) Decision { return Decision{} }

func (t *tracker) overtakes(time.Time, event.CheckpointBarrier) bool { return false }

// progress reports the oldest pending checkpoint.
func (t *tracker) progress() *alignment {
	if len(t.pending) == 0 {
		return nil
	}
	return t.pending[0]
}
