package jdbc

import (
	"errors"
	"sync"
	"time"

	"github.com/weirstream/weir/event"
)

// buffer holds rows until they are flushed: when maxRows are buffered, when
// the interval timer fires (on its own goroutine, as Flink's JDBC sink does),
// at a barrier and at the end of input. It is the only state the subtask
// goroutine and the timer goroutine share, so a writer keeps everything its
// flush touches (for XA: the open transaction) under mu.
//
// A failed flush is sticky: the writer is broken and every later call
// returns the error, so the job fails and restarts from its checkpoint.
type buffer struct {
	maxRows int
	// flush writes rows; called with mu held. It must not keep rows.
	flush func(rows []event.Row) error
	stop  chan struct{}
	done  chan struct{}
	mu    struct {
		sync.Mutex
		rows []event.Row
		err  error
	}
}

func newBuffer(maxRows int, interval time.Duration, flush func([]event.Row) error) *buffer {
	b := &buffer{maxRows: maxRows, flush: flush, stop: make(chan struct{}), done: make(chan struct{})}
	if interval <= 0 {
		close(b.done)
		return b
	}
	go b.timer(interval)
	return b
}

func (b *buffer) timer(interval time.Duration) {
	defer close(b.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.mu.Lock()
			_ = b.flushLocked() // a failure is kept and reported by the next call
			b.mu.Unlock()
		}
	}
}

// add buffers r and flushes when the buffer is full.
func (b *buffer) add(r event.Row) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.err != nil {
		return b.mu.err
	}
	b.mu.rows = append(b.mu.rows, r)
	if b.maxRows > 0 && len(b.mu.rows) >= b.maxRows {
		return b.flushLocked()
	}
	return nil
}

// flushThen flushes and, if that worked, runs fn, both under mu.
func (b *buffer) flushThen(fn func() error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.flushLocked(); err != nil {
		return err
	}
	if fn == nil {
		return nil
	}
	if err := fn(); err != nil {
		b.mu.err = err
		return err
	}
	return nil
}

// errDeferred, returned by a flush function, keeps the rows buffered
// without failing: the writer cannot write them yet.
var errDeferred = errors.New("jdbc: flush deferred")

func (b *buffer) flushLocked() error {
	if b.mu.err != nil || len(b.mu.rows) == 0 {
		return b.mu.err
	}
	if err := b.flush(b.mu.rows); err == errDeferred {
		return nil
	} else if err != nil {
		b.mu.err = err
		return err
	}
	clear(b.mu.rows)
	b.mu.rows = b.mu.rows[:0]
	return nil
}

// take hands the buffered rows to fn under mu and, if fn succeeds, drops
// them from the buffer.
func (b *buffer) take(fn func(rows []event.Row) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.mu.err != nil {
		return b.mu.err
	}
	if err := fn(b.mu.rows); err != nil {
		b.mu.err = err
		return err
	}
	b.mu.rows = nil
	return nil
}

// close stops the timer and runs fn (cleanup) under mu; buffered rows are
// dropped: they were never acknowledged by a checkpoint.
func (b *buffer) close(fn func()) {
	select {
	case <-b.stop:
	default:
		close(b.stop)
	}
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	if fn != nil {
		fn()
	}
}
