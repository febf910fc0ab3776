package metrics

import (
	"sync"
	"sync/atomic"
)

// Tail lets readers sample the rows one subtask emits (Arroyo's tail of
// an operator's output) without ever slowing it: the subtask offers a
// row to each reader that still has a token (the reader refills its
// tokens at its own pace: its sample rate) and puts it in the reader's
// buffer unless that is full, in which case the sample is dropped and
// counted. Nothing blocks and nothing grows: a reader costs the subtask
// one atomic load per row, no reader one nil check. The zero value has
// no readers. Safe for concurrent use.
type Tail struct {
	readers atomic.Pointer[[]*TailReader]
	mu      sync.Mutex // serialises Attach and Detach
}

// Sample is one row as a tail shows it: its RowKind (+I, -U, +U, -D),
// its fields printed, its event time (ms; Long.MIN_VALUE: none) and the
// subtask that emitted it.
type Sample struct {
	Subtask   int
	Kind      string
	Fields    []string
	Timestamp int64
}

// TailReader is one reader's side of the tails it is attached to: a
// bounded buffer and its counts.
type TailReader struct {
	// C receives the samples.
	C chan Sample
	// tokens is how many samples the subtasks may still take.
	tokens atomic.Int64
	// seen counts rows offered while attached; dropped the samples taken
	// when C was full.
	seen, dropped atomic.Int64
}

// NewTailReader returns a reader buffering up to buffer samples, with no
// token yet.
func NewTailReader(buffer int) *TailReader {
	return &TailReader{C: make(chan Sample, buffer)}
}

// Refill sets the samples the subtasks may take until the next Refill;
// calling it every interval with rate×interval bounds the sample rate.
func (r *TailReader) Refill(n int64) { r.tokens.Store(n) }

// Seen is the rows offered to the reader so far, sampled or not.
func (r *TailReader) Seen() int64 { return r.seen.Load() }

// Dropped is the samples lost so far because the reader's buffer was full
// (the subtasks never wait for a slow reader).
func (r *TailReader) Dropped() int64 { return r.dropped.Load() }

// Take reports whether the reader takes the row offered now (it has a
// token), counting it seen.
func (r *TailReader) Take() bool {
	r.seen.Add(1)
	if r.tokens.Load() <= 0 {
		return false
	}
	r.tokens.Add(-1)
	return true
}

// Put hands the reader a sample without waiting: a full buffer drops it.
func (r *TailReader) Put(s Sample) {
	select {
	case r.C <- s:
	default:
		r.dropped.Add(1)
	}
}

// Readers returns the attached readers (nil: none).
func (t *Tail) Readers() []*TailReader {
	if p := t.readers.Load(); p != nil {
		return *p
	}
	return nil
}

// Attach adds r to the tail's readers.
func (t *Tail) Attach(r *TailReader) {
	t.mu.Lock()
	defer t.mu.Unlock()
	rs := append(append([]*TailReader(nil), t.Readers()...), r)
	t.readers.Store(&rs)
}

// Detach removes r; the subtask may still hand it a sample it took just
// before, which r's buffer absorbs or drops.
func (t *Tail) Detach(r *TailReader) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var rs []*TailReader
	for _, x := range t.Readers() {
		if x != r {
			rs = append(rs, x)
		}
	}
	if len(rs) == 0 {
		t.readers.Store(nil)
		return
	}
	t.readers.Store(&rs)
}
