// Package sim holds Weir's deterministic fault-injection harness: a
// transactional in-memory sink with a two-phase commit, seeded crash points,
// and a checker that compares committed output with the input as exact
// multisets. The exactly-once soak tests live beside it.
package sim

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

type txnStatus int

const (
	txnOpen txnStatus = iota
	txnPrepared
	txnCommitted
	txnAborted
)

type txn struct {
	name       string
	subtask    int
	checkpoint event.CheckpointID
	status     txnStatus
	records    []any
}

// Store is the "external system" behind TxSink: it outlives job attempts,
// as a database outlives a crashed process.
type Store struct {
	mu        sync.Mutex
	txns      map[string]*txn
	committed []any
	seq       int
	// Commits counts successful commit calls (re-commits included).
	Commits int
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{txns: map[string]*txn{}} }

// Committed returns every committed record, in commit order.
func (s *Store) Committed() []any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]any(nil), s.committed...)
}

// Lingering returns the names of transactions neither committed nor aborted.
func (s *Store) Lingering() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n, t := range s.txns {
		if t.status == txnOpen || t.status == txnPrepared {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// TxSink is an exactly-once sink over Store: each subtask writes into an
// open transaction, prepares it at the barrier (the committable is its
// name), and commits on checkpoint completion. Faults may crash it at
// "prepare" and "commit" (before and after the commit takes effect).
type TxSink struct {
	Store  *Store
	Faults *Faults
	// AtLeastOnce writes records straight to committed (no transactions).
	AtLeastOnce bool
	// Trace, if set, records each commit call and its transactions.
	Trace *Trace
	// LoseCommit, when n > 0, plants a bug: the nth commit call reports
	// success without committing (a test of the simulation's replay).
	LoseCommit int
	commits    atomic.Int64
}

// CreateWriter aborts the lingering transactions of this subtask and opens one.
func (k *TxSink) CreateWriter(ctx operator.WriterContext) (operator.SinkWriter, error) {
	w := &txWriter{sink: k, subtask: ctx.Subtask.Index}
	k.Store.abortLingering(ctx.Subtask.Index, ctx.RestoredCheckpoint)
	w.begin()
	return w, nil
}

// CreateCommitter returns the committer (nil in at-least-once mode).
func (k *TxSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	if k.AtLeastOnce {
		return nil, nil
	}
	return &txCommitter{sink: k}, nil
}

// abortLingering aborts open transactions of subtask and prepared ones of
// checkpoints newer than restored (their checkpoint never completed).
func (s *Store) abortLingering(subtask int, restored event.CheckpointID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.txns {
		if t.subtask != subtask {
			continue
		}
		if t.status == txnOpen || (t.status == txnPrepared && t.checkpoint > restored) {
			t.status = txnAborted
		}
	}
}

type txWriter struct {
	sink    *TxSink
	subtask int
	cur     *txn
}

func (w *txWriter) begin() {
	s := w.sink.Store
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	w.cur = &txn{name: fmt.Sprintf("tx-%d-%d", w.subtask, s.seq), subtask: w.subtask}
	s.txns[w.cur.name] = w.cur
}

func (w *txWriter) Write(r event.Record) error {
	s := w.sink.Store
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.sink.AtLeastOnce {
		s.committed = append(s.committed, r.Value)
		return nil
	}
	if w.cur.status != txnOpen {
		return fmt.Errorf("txsink: transaction %s is no longer open", w.cur.name)
	}
	w.cur.records = append(w.cur.records, r.Value)
	return nil
}

func (w *txWriter) Flush(bool) error { return nil }

func (w *txWriter) PrepareCommit(id event.CheckpointID) ([][]byte, error) {
	if err := w.sink.Faults.Maybe("prepare"); err != nil {
		return nil, err
	}
	if w.sink.AtLeastOnce {
		return nil, nil
	}
	s := w.sink.Store
	s.mu.Lock()
	w.cur.status, w.cur.checkpoint = txnPrepared, id
	name := w.cur.name
	s.mu.Unlock()
	w.begin()
	return [][]byte{[]byte(name)}, nil
}

func (w *txWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }

// Close aborts the open transaction (a real database would too, when the
// session ends); prepared ones survive.
func (w *txWriter) Close() error {
	s := w.sink.Store
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.cur != nil && w.cur.status == txnOpen {
		w.cur.status = txnAborted
	}
	return nil
}

type txCommitter struct{ sink *TxSink }

// ErrTxnLost is returned when a committable's transaction was aborted.
var ErrTxnLost = errors.New("txsink: transaction lost")

func (c *txCommitter) Commit(_ context.Context, id event.CheckpointID, committables [][]byte) error {
	if err := c.sink.Faults.Maybe("commit"); err != nil {
		return err
	}
	n := int(c.sink.commits.Add(1))
	if c.sink.Trace != nil {
		c.sink.Trace.Add(fmt.Sprintf("commit #%d checkpoint %d %s", n, id, committables))
	}
	if n == c.sink.LoseCommit {
		return nil // the planted bug
	}
	for _, name := range committables {
		if err := c.sink.Store.commit(string(name)); err != nil {
			return err
		}
	}
	return c.sink.Faults.Maybe("after-commit")
}

func (s *Store) commit(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.txns[name]
	switch {
	case t == nil || t.status == txnAborted || t.status == txnOpen:
		return fmt.Errorf("%w: %s: %w", ErrTxnLost, name, operator.ErrDataLoss)
	case t.status == txnPrepared:
		s.committed = append(s.committed, t.records...)
		t.status = txnCommitted
		s.Commits++
	}
	return nil
}

func (c *txCommitter) Close() error { return nil }
