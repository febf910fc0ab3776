package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// GatedSource is a SeqSource whose readers emit nothing until the first
// checkpoint of their attempt completes. After a restore this makes the
// first checkpoint hold exactly the restored state: no record gets between
// the restore and it.
type GatedSource struct{ *SeqSource }

// CreateReader wraps the SeqSource reader in a gate.
func (g GatedSource) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	r, err := g.SeqSource.CreateReader(ctx)
	if err != nil {
		return nil, err
	}
	return &gatedReader{seqReader: r.(*seqReader), gate: make(chan struct{})}, nil
}

type gatedReader struct {
	*seqReader
	open bool
	gate chan struct{}
}

func (r *gatedReader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if !r.open {
		return operator.NothingAvailable, nil
	}
	return r.seqReader.Poll(out)
}

func (r *gatedReader) Available() <-chan struct{} {
	if !r.open {
		return r.gate
	}
	return r.seqReader.Available()
}

func (r *gatedReader) NotifyCheckpointComplete(id event.CheckpointID) error {
	if !r.open {
		r.open = true
		close(r.gate)
	}
	return r.seqReader.NotifyCheckpointComplete(id)
}

func (s txnStatus) String() string {
	return [...]string{"open", "prepared", "committed", "aborted"}[s]
}

// TxnInfo describes one transaction of a Store.
type TxnInfo struct {
	Name       string
	Subtask    int
	Checkpoint event.CheckpointID // the checkpoint it was prepared for; 0 if never prepared
	Status     string             // open, prepared, committed or aborted
	Records    []any
}

// Txns lists every transaction the store has seen, by name.
func (s *Store) Txns() []TxnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]TxnInfo, 0, len(s.txns))
	for _, t := range s.txns {
		out = append(out, TxnInfo{Name: t.name, Subtask: t.subtask, Checkpoint: t.checkpoint,
			Status: t.status.String(), Records: append([]any(nil), t.records...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CommitCount returns Store.Commits under the store's lock.
func (s *Store) CommitCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Commits
}

// Clone returns a deep copy of the store: the external system as it was at
// one instant, for restoring the same checkpoint into several copies.
func (s *Store) Clone() *Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Store{txns: make(map[string]*txn, len(s.txns)), committed: append([]any(nil), s.committed...),
		seq: s.seq, Commits: s.Commits}
	for n, t := range s.txns {
		cp := *t
		cp.records = append([]any(nil), t.records...)
		c.txns[n] = &cp
	}
	return c
}

// CommitCall is one call of a committer's Commit, as RecordingSink saw it.
type CommitCall struct {
	Subtask      int
	Checkpoint   event.CheckpointID
	Committables []string
	Err          error
}

// RecordingSink wraps a sink and records every Commit call of its
// committers, with its outcome.
type RecordingSink struct {
	operator.Sink
	mu    sync.Mutex
	calls []CommitCall
}

// CreateCommitter wraps the inner committer.
func (r *RecordingSink) CreateCommitter(ctx operator.WriterContext) (operator.Committer, error) {
	c, err := r.Sink.CreateCommitter(ctx)
	if c == nil || err != nil {
		return c, err
	}
	return &recordingCommitter{inner: c, sink: r, subtask: ctx.Subtask.Index}, nil
}

// Calls returns the recorded calls in order.
func (r *RecordingSink) Calls() []CommitCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]CommitCall(nil), r.calls...)
}

type recordingCommitter struct {
	inner   operator.Committer
	sink    *RecordingSink
	subtask int
}

func (c *recordingCommitter) Commit(ctx context.Context, id event.CheckpointID, committables [][]byte) error {
	err := c.inner.Commit(ctx, id, committables)
	call := CommitCall{Subtask: c.subtask, Checkpoint: id, Err: err}
	for _, b := range committables {
		call.Committables = append(call.Committables, string(b))
	}
	c.sink.mu.Lock()
	c.sink.calls = append(c.sink.calls, call)
	c.sink.mu.Unlock()
	return err
}

func (c *recordingCommitter) Close() error { return c.inner.Close() }

// Fired is what TimerFn emits: the event-time timer of Key at Ts fired.
type Fired struct {
	Key int
	Ts  int64
}

// TimerFn is a KeyedProcessFunction over Seq elements: it registers an
// event-time timer at each element's timestamp and emits Fired when the
// timer fires. Faults may crash it at "open" (once per subtask and attempt)
// and "timer" (at a firing, before its output). One TimerFn may serve every
// subtask: it keeps no state of its own.
type TimerFn struct {
	Faults *Faults
	// Count, if set, counts firings (including ones whose output a crash
	// later discards).
	Count *atomic.Int64
}

// Open may crash.
func (f *TimerFn) Open(*operator.Context) error { return f.Faults.Maybe("open") }

// ProcessElement registers a timer at the element's timestamp.
func (f *TimerFn) ProcessElement(_ any, kc *operator.KeyedContext, out *operator.Collector) error {
	kc.RegisterEventTimeTimer(out.Timestamp())
	return nil
}

// OnTimer may crash, then emits Fired.
func (f *TimerFn) OnTimer(t operator.Timer, _ *operator.KeyedContext, out *operator.Collector) error {
	if err := f.Faults.Maybe("timer"); err != nil {
		return err
	}
	out.Collect(Fired{Key: t.Key.(int), Ts: t.Timestamp})
	if f.Count != nil {
		f.Count.Add(1)
	}
	return nil
}

// Collected is a thread-safe list of values, filled by CollectOp.
type Collected struct {
	mu     sync.Mutex
	values []any
}

// Values returns what was collected, in arrival order.
func (c *Collected) Values() []any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]any(nil), c.values...)
}

// Len is the number collected so far.
func (c *Collected) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.values)
}

// CollectOp appends every record's value to Out: a sink for tests that
// watch a running job, without transactions.
type CollectOp struct {
	operator.Base
	Out *Collected
}

// ProcessElement collects r.
func (c *CollectOp) ProcessElement(r event.Record) error {
	c.Out.mu.Lock()
	c.Out.values = append(c.Out.values, r.Value)
	c.Out.mu.Unlock()
	return nil
}

// TornSnapshot makes one checkpoint be torn by a crash: TornOp's subtask 1
// crashes in the synchronous snapshot of the first checkpoint it takes
// after seeing AfterCompleted completions, but only once subtask 0 has
// written its state file for that checkpoint (or Wait has passed), so the
// crash leaves a partly written chk-N directory behind. It crashes once in
// the life of the TornSnapshot, whatever the restarts.
type TornSnapshot struct {
	// Dir is the checkpoint directory; Wait bounds the wait for subtask 0.
	Dir            string
	AfterCompleted int
	Wait           time.Duration
	fired          atomic.Bool
	// Torn is the id of the torn checkpoint, once it happened.
	Torn atomic.Int64
}

// TornOp passes records through and tears a checkpoint as its
// TornSnapshot says. It runs with parallelism ≥ 2; its UID must be "torn".
type TornOp struct {
	operator.Base
	T         *TornSnapshot
	completed int
}

// ProcessElement forwards r.
func (o *TornOp) ProcessElement(r event.Record) error {
	o.Ctx.Output.Collect(r)
	return nil
}

// NotifyCheckpointComplete counts completions.
func (o *TornOp) NotifyCheckpointComplete(event.CheckpointID) error {
	o.completed++
	return nil
}

// SnapshotState tears the chosen checkpoint on subtask 1.
func (o *TornOp) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	if o.Ctx.Subtask.Index != 1 || o.completed < o.T.AfterCompleted || !o.T.fired.CompareAndSwap(false, true) {
		return o.Base.SnapshotState(id)
	}
	o.T.Torn.Store(int64(id))
	// Subtask 0 writes "<uid>-<index>-<part>" files; its last one is this
	// operator's "operator" part.
	other := filepath.Join(o.T.Dir, fmt.Sprintf("chk-%d", id), "torn-0-operator")
	deadline := time.Now().Add(o.T.Wait)
	for time.Now().Before(deadline) {
		if fi, err := os.Stat(other); err == nil && fi.Size() > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return nil, fmt.Errorf("%w: torn snapshot of checkpoint %d", ErrInjected, id)
}

// IsInjected reports whether err comes from a crash a Faults injected.
func IsInjected(err error) bool { return errors.Is(err, ErrInjected) }

// DeclineRace makes checkpoint Target be declined while another subtask's
// asynchronous write for it is still under way: DeclineOp's subtask 1
// adds a part whose encoding fails (the subtask declines the checkpoint,
// the job aborts it and discards its directory), and subtask 0 holds its
// own part back until the abort was reported, then lets it be written.
type DeclineRace struct {
	Target event.CheckpointID
	Wait   time.Duration
	// Failed is to be set by the job's listener when Target fails; the
	// runtime discards the directory right after reporting that.
	Failed atomic.Bool
	// Late tells whether subtask 0's part was released after the report.
	Late atomic.Bool
}

// DeclineOp passes records through and plays its DeclineRace. It runs
// with parallelism 2.
type DeclineOp struct {
	operator.Base
	R *DeclineRace
}

// ProcessElement forwards r.
func (o *DeclineOp) ProcessElement(r event.Record) error {
	o.Ctx.Output.Collect(r)
	return nil
}

// SnapshotState adds the failing or the late part to checkpoint Target.
func (o *DeclineOp) SnapshotState(id event.CheckpointID) ([]operator.Part, error) {
	parts, err := o.Base.SnapshotState(id)
	if err != nil || id != o.R.Target {
		return parts, err
	}
	if o.Ctx.Subtask.Index == 1 {
		return append(parts, operator.Part{Name: "declined", Snap: failingSnap{}}), nil
	}
	return append(parts, operator.Part{Name: "late", Snap: &lateSnap{r: o.R}}), nil
}

type failingSnap struct{}

func (failingSnap) Write() ([]byte, error) {
	return nil, fmt.Errorf("%w: encoding a snapshot part", ErrInjected)
}

type lateSnap struct{ r *DeclineRace }

// Write waits until the failure was reported, and a little longer: the
// job's driver discards the directory right after reporting, on the same
// goroutine, without blocking on anything in between.
func (s *lateSnap) Write() ([]byte, error) {
	for deadline := time.Now().Add(s.r.Wait); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if s.r.Failed.Load() {
			time.Sleep(20 * time.Millisecond)
			s.r.Late.Store(true)
			break
		}
	}
	return []byte("late"), nil
}
