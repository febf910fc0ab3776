package barrier

import (
	"time"

	"github.com/weirstream/weir/event"
)

// aligner is the ExactlyOnce strategy: at most one alignment at a time, and
// each channel blocked from its barrier until the alignment ends — or, with
// unaligned checkpoints, no channel blocked: the snapshot is taken at the
// first barrier (or when the aligned timeout expires) and the alignment goes
// on only to tell which channels still have input to persist.
type aligner struct {
	stopwatch
	in  *inputs
	opt Options
	// cur is the newest checkpoint this task has seen a barrier or
	// cancel-barrier for; active is its alignment while in progress.
	cur     event.CheckpointID
	active  *alignment
	isBlock []bool
	aborted abortSet
}

func newAligner(in *inputs, o Options) *aligner {
	return &aligner{in: in, opt: o, isBlock: make([]bool, len(in.finished)), aborted: abortSet{}}
}

// mayUnalign reports whether checkpoint b may be taken unaligned: savepoints
// never are, as in Flink, and neither is the final checkpoint of a bounded
// input (or of a stop with drain): the records it would overtake are
// processed after it, and no later checkpoint would commit their output.
func (a *aligner) mayUnalign(b event.CheckpointBarrier) bool {
	return a.opt.Unaligned && !b.Type.IsSavepoint() && !b.Final
}

// stale reports whether a (cancel-)barrier for id can be ignored: it is older
// than the current checkpoint, or it is the current one and that is already
// snapshotted or abandoned.
func (a *aligner) stale(id event.CheckpointID) bool {
	return id < a.cur || (id == a.cur && a.active == nil)
}

func (a *aligner) barrier(now time.Time, ch int, b event.CheckpointBarrier) Decision {
	if a.stale(b.ID) {
		return Decision{}
	}
	var d Decision
	if b.ID > a.cur {
		// ch delivered a newer barrier, so it will never deliver the current
		// one: the current alignment can no longer complete.
		d = a.abandon(subsumedBy(b.ID))
		if a.advance(b.ID) {
			d.Abort = append(d.Abort, Aborted{ID: b.ID, Reason: ErrAborted})
			return d
		}
		a.active = newAlignment(now, b, a.in)
		if a.mayUnalign(b) && (a.opt.AlignedTimeout == 0 || a.expired(now)) {
			// Unaligned from the start, or the first barrier came after the
			// timeout (it waited behind data): snapshot now.
			a.active.arrive(ch, a.in)
			return d.then(a.unalign(now))
		}
	}
	return d.then(a.arrive(now, ch))
}

// arrive records ch's barrier for the active alignment and completes it or
// blocks ch. A finished channel is never blocked: nothing more comes from it.
// An alignment whose aligned timeout has expired switches to unaligned
// instead of blocking ch.
func (a *aligner) arrive(now time.Time, ch int) Decision {
	if !a.active.arrive(ch, a.in) {
		return Decision{}
	}
	if a.active.unaligned {
		if a.in.finished[ch] {
			return Decision{} // never persisted: counted as arrived at its end
		}
		return a.persisted(ch)
	}
	if a.active.done() {
		return a.complete(now)
	}
	if a.expired(now) {
		return a.unalign(now)
	}
	if a.in.finished[ch] {
		return Decision{}
	}
	a.isBlock[ch] = true
	return Decision{Block: []int{ch}}
}

// expired reports whether the active aligned checkpoint has outlasted the
// aligned timeout, counted from its trigger, and may switch to unaligned.
func (a *aligner) expired(now time.Time) bool {
	al := a.active
	return al != nil && !al.unaligned && a.mayUnalign(al.barrier) &&
		a.opt.AlignedTimeout > 0 && now.Sub(al.triggered) >= a.opt.AlignedTimeout
}

// unalign takes the active checkpoint's snapshot now, unaligned: the open
// channels whose barrier is still missing are persisted until it comes, and
// the channels blocked so far (their barrier is in) resume. If nothing is
// missing, the channel state is complete at once.
func (a *aligner) unalign(now time.Time) Decision {
	al := a.active
	al.unaligned = true
	a.record(now, al)
	b := al.barrier
	_, missing := al.report(a.in)
	d := Decision{Snapshot: &b, Unaligned: true, Persist: missing, Unblock: a.unblockAll()}
	if al.done() {
		d.ChannelStateDone = b.ID
		a.active = nil
	}
	return d
}

// persisted stops persisting channel ch for the unaligned checkpoint in
// progress (its barrier or end arrived); the last one completes it.
func (a *aligner) persisted(ch int) Decision {
	d := Decision{Persisted: []int{ch}}
	if a.active.done() {
		d.ChannelStateDone = a.active.id()
		a.active = nil
	}
	return d
}

// overtakes: a barrier of the active checkpoint overtakes only once that is
// unaligned (an expired aligned one may still complete aligned on it); a new
// checkpoint's first barrier overtakes when barrier will unalign it at once.
func (a *aligner) overtakes(now time.Time, b event.CheckpointBarrier) bool {
	switch {
	case !a.mayUnalign(b):
		return false
	case a.active != nil && a.active.id() == b.ID:
		return a.active.unaligned
	}
	return b.ID > a.cur && (a.opt.AlignedTimeout == 0 ||
		now.Sub(triggerTime(now, b)) >= a.opt.AlignedTimeout)
}

func (a *aligner) tick(now time.Time) Decision {
	if !a.expired(now) {
		return Decision{}
	}
	return a.unalign(now)
}

func (a *aligner) complete(now time.Time) Decision {
	b := a.active.barrier
	a.record(now, a.active)
	a.active = nil
	return Decision{Snapshot: &b, Unblock: a.unblockAll()}
}

// abandon gives up the active alignment, if any, for reason.
func (a *aligner) abandon(reason error) Decision {
	if a.active == nil {
		return Decision{}
	}
	d := Decision{Abort: []Aborted{{ID: a.active.id(), Reason: reason}}, Unblock: a.unblockAll()}
	a.active = nil
	return d
}

// unblockAll clears every block and reports whether there was any.
func (a *aligner) unblockAll() bool {
	had := false
	for ch, b := range a.isBlock {
		had = had || b
		a.isBlock[ch] = false
	}
	return had
}

// advance makes id the current checkpoint. It reports whether the
// coordinator aborted id before any of its barriers reached this task.
func (a *aligner) advance(id event.CheckpointID) bool {
	a.cur = id
	wasAborted := a.aborted.take(id)
	a.aborted.prune(id)
	return wasAborted
}

func (a *aligner) cancel(ch int, id event.CheckpointID) Decision {
	if a.stale(id) {
		return Decision{}
	}
	if id == a.cur {
		return a.abandon(cancelledOn(ch))
	}
	d := a.abandon(subsumedByCancelled(id))
	a.advance(id)
	d.Abort = append(d.Abort, Aborted{ID: id, Reason: cancelledOn(ch)})
	return d
}

func (a *aligner) endOfInput(now time.Time, ch int) Decision {
	if a.active == nil {
		return Decision{}
	}
	if !a.active.finish(ch) {
		return Decision{}
	}
	switch {
	case a.active.unaligned:
		return a.persisted(ch)
	case a.active.done():
		return a.complete(now)
	case a.expired(now):
		return a.unalign(now)
	}
	return Decision{}
}

func (a *aligner) abort(id event.CheckpointID) Decision {
	switch {
	case a.stale(id):
		return Decision{}
	case id == a.cur:
		return a.abandon(ErrAborted)
	}
	a.aborted.add(id)
	return Decision{}
}

func (a *aligner) blocked(ch int) bool { return a.isBlock[ch] }

func (a *aligner) progress() *alignment { return a.active }
