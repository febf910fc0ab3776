package operator

import (
	"bytes"
	"sync/atomic"
)

// A checkpoint writes every timer of the operator (the timers part is
// whole in each checkpoint, as Flink writes its heap timers). Encoding
// each timer again at every checkpoint cost in proportion to the timers
// held: at 1 s checkpoints Nexmark q5 and q11 spent 2–3 % of a 10 M-event
// run on it, nothing at 1 M, and more the longer a run. So a heap queue's
// bucket keeps the encoding of its timers that the last snapshot wrote
// (timerEncoding) while it is only appended to — a window's timers are
// registered and then wait for their time — and the next snapshot copies
// those bytes and encodes only the timers added since. Anything else
// that changes a bucket (a removal, a ghost revived, a compaction, the
// sort before firing) drops its encoding (timerBucket.invalidate).
//
// The writer encodes on another goroutine while the owner goes on: it
// leaves a bucket's new encoding in the encodedBack the capture made, and
// the owner takes it at the next capture if the bucket has not changed
// otherwise since (its gen is the same).

// timerEncoding is the encoding of a bucket's registered timers among
// its first upTo (the format of timerSnapshot.append, one after another),
// in segments that are never changed once made.
type timerEncoding struct {
	segs  [][]byte
	count int // timers encoded
	upTo  int
}

// size is the encoding's length in bytes.
func (e timerEncoding) size() int {
	n := 0
	for _, s := range e.segs {
		n += len(s)
	}
	return n
}

// encodedBack is where a writer leaves a bucket's encoding: base, then
// the timers the capture copied, which were the bucket's up to upTo.
type encodedBack struct {
	gen  uint64 // the bucket's gen at the capture
	base timerEncoding
	upTo int
	done atomic.Bool
	// result is set by the writer before done.
	result timerEncoding
}

// maxSegments bounds a kept encoding's segments: a bucket that gains
// timers at every checkpoint for a day of them would otherwise hold, and
// have each snapshot walk, one segment per checkpoint.
const maxSegments = 16

// finish records the encoding of the captured timers after base: fresh,
// count of them. It copies fresh, a part of the writer's blob, and joins
// the segments into one once they are too many.
func (e *encodedBack) finish(fresh []byte, count int) {
	r := timerEncoding{segs: e.base.segs[:len(e.base.segs):len(e.base.segs)], count: e.base.count + count, upTo: e.upTo}
	if len(fresh) > 0 {
		r.segs = append(r.segs, bytes.Clone(fresh))
	}
	if len(r.segs) > maxSegments {
		r.segs = [][]byte{bytes.Join(r.segs, nil)}
	}
	e.result = r
	e.done.Store(true)
}

// timerPiece is part of a captured heap queue: timers already encoded
// (enc) and timers to encode (ts); back, if set, takes ts's encoding.
type timerPiece struct {
	enc  timerEncoding
	ts   []Timer
	back *encodedBack
}

// capturedQueue is one time domain's timers as a snapshot captured them:
// a heap queue's pieces, or each, which calls f with every timer of a
// backend's queue.
type capturedQueue struct {
	pieces []timerPiece
	each   func(f func(Timer)) error
}

// invalidate drops the bucket's kept encoding (and any the writer has
// yet to leave): its timers changed other than by an append.
func (b *timerBucket) invalidate() {
	b.gen++
	b.enc, b.pend = nil, nil
}

// adopt takes the encoding the writer left for the bucket, if it has and
// the bucket has not changed since but by appends.
func (b *timerBucket) adopt() {
	if b.pend == nil || !b.pend.done.Load() {
		return
	}
	if b.pend.gen == b.gen {
		r := b.pend.result
		b.enc = &r
	}
	b.pend = nil
}
