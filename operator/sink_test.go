package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
)

func TestCommitLogDueAndRoundTrip(t *testing.T) {
	l := NewCommitLog()
	l.Add(3, [][]byte{[]byte("c3")})
	l.Add(1, [][]byte{[]byte("c1a"), []byte("c1b")})
	l.Add(2, nil) // nothing pre-committed: not recorded
	l.Add(5, [][]byte{[]byte("c5")})
	if got := fmt.Sprint(l.Due(3)); got != "[1 3]" {
		t.Fatalf("Due(3) = %s, want [1 3]", got)
	}
	r := NewCommitLog()
	if err := r.DecodeInto(l.Encode()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []event.CheckpointID{1, 3, 5} {
		if fmt.Sprintf("%q", r.Get(id)) != fmt.Sprintf("%q", l.Get(id)) {
			t.Fatalf("checkpoint %d: %q after round trip, want %q", id, r.Get(id), l.Get(id))
		}
	}
	r.Committed(1)
	r.Committed(3)
	if got := fmt.Sprint(r.Due(10)); got != "[5]" {
		t.Fatalf("after commits Due(10) = %s, want [5]", got)
	}
	if err := NewCommitLog().DecodeInto([]byte{5, 1}); err == nil {
		t.Fatal("truncated log decoded without error")
	}
}

type flakyCommitter struct {
	fails, calls int
	loss         bool
}

func (f *flakyCommitter) Commit(_ context.Context, _ event.CheckpointID, _ [][]byte) error {
	f.calls++
	if f.loss {
		return fmt.Errorf("txn gone: %w", ErrDataLoss)
	}
	if f.calls <= f.fails {
		return errors.New("connection reset")
	}
	return nil
}
func (f *flakyCommitter) Close() error { return nil }

type oneCommitSink struct{ c *flakyCommitter }

func (s oneCommitSink) CreateWriter(WriterContext) (SinkWriter, error)   { return preWriter{}, nil }
func (s oneCommitSink) CreateCommitter(WriterContext) (Committer, error) { return s.c, nil }

type preWriter struct{}

func (preWriter) Write(event.Record) error { return nil }
func (preWriter) Flush(bool) error         { return nil }
func (preWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) {
	return [][]byte{[]byte("tx")}, nil
}
func (preWriter) SnapshotState(event.CheckpointID) ([]byte, error) { return nil, nil }
func (preWriter) Close() error                                     { return nil }

func TestCommitRetriesInPlaceButNeverOnDataLoss(t *testing.T) {
	const CommitRetries = DefaultCommitRetries
	run := func(c *flakyCommitter) error {
		op := NewSinkOperator(oneCommitSink{c})
		if err := op.Open(&Context{Parallelism: 1, CommitBackoff: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if err := op.PrepareSnapshotPreBarrier(1); err != nil {
			t.Fatal(err)
		}
		return op.NotifyCheckpointComplete(1)
	}
	c := &flakyCommitter{fails: CommitRetries}
	if err := run(c); err != nil || c.calls != CommitRetries+1 {
		t.Fatalf("after %d transient failures: err %v, %d calls", CommitRetries, err, c.calls)
	}
	c = &flakyCommitter{fails: CommitRetries + 1}
	if err := run(c); err == nil || c.calls != CommitRetries+1 {
		t.Fatalf("persistent failure: err %v after %d calls", err, c.calls)
	}
	c = &flakyCommitter{loss: true}
	if err := run(c); !errors.Is(err, ErrDataLoss) || c.calls != 1 {
		t.Fatalf("data loss: err %v after %d calls; want one call, ErrDataLoss", err, c.calls)
	}
}

func TestWriteAheadSinkWritesOnCompletionAndReplaysIdempotently(t *testing.T) {
	type key struct {
		sub int
		id  event.CheckpointID
	}
	written := map[key][]any{}
	calls := 0
	sink := &WriteAheadSink{Write: func(_ context.Context, sub int, id event.CheckpointID, recs []any) error {
		calls++
		written[key{sub, id}] = recs // idempotent: keyed by (subtask, checkpoint)
		return nil
	}}
	op := NewSinkOperator(sink)
	if err := op.Open(&Context{Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"a", int64(2), "c"} {
		op.ProcessElement(event.Record{Value: v})
	}
	op.PrepareSnapshotPreBarrier(7)
	parts, _ := op.SnapshotState(7)
	if len(written) != 0 {
		t.Fatal("records written before the checkpoint completed")
	}
	op.NotifyCheckpointComplete(7)
	if fmt.Sprint(written[key{0, 7}]) != "[a 2 c]" {
		t.Fatalf("written %v", written)
	}
	// A restore of checkpoint 7 hands the same records over again.
	blob, _ := parts[0].Snap.Write()
	re := NewSinkOperator(sink)
	re.InitializeState(map[string][][]byte{PartCommits: {blob}})
	if err := re.Open(&Context{Parallelism: 1, RestoredCheckpoint: 7}); err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(written) != 1 || fmt.Sprint(written[key{0, 7}]) != "[a 2 c]" {
		t.Fatalf("after replay: %d calls, %v", calls, written)
	}
}

// A job without checkpoints: a bounded one commits everything at the end
// of input; an unbounded one refuses a sink with a committer at open, and
// accepts one without.
func TestSinkCommitsWithoutCheckpoints(t *testing.T) {
	var written []string
	sink := &WriteAheadSink{Write: func(_ context.Context, sub int, id event.CheckpointID, recs []any) error {
		written = append(written, fmt.Sprintf("subtask %d, commit %d: %v", sub, id, recs))
		return nil
	}}
	op := NewSinkOperator(sink)
	if err := op.Open(&Context{Parallelism: 1, Commit: CommitAtEndOfInput}); err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{"a", "b"} {
		op.ProcessElement(event.Record{Value: v})
	}
	if len(written) != 0 {
		t.Fatalf("written before the end of input: %v", written)
	}
	if err := op.Finish(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(written); got != "[subtask 0, commit 1: [a b]]" || op.log.Len() != 0 {
		t.Fatalf("after Finish: written %s, %d pending", got, op.log.Len())
	}

	err := NewSinkOperator(sink).Open(&Context{Parallelism: 1, Name: "Sink: out", Commit: CommitNever})
	const want = `operator: sink can never commit: "Sink: out" writes its output only when a checkpoint completes, ` +
		`but this job takes no checkpoints and never ends, so it would never write anything; hint: enable checkpointing, ` +
		`e.g. SET 'execution.checkpointing.interval' = '10 s' (Go: runtime.Options.Checkpoint.Interval)`
	if !errors.Is(err, ErrNeverCommits) || err.Error() != want {
		t.Fatalf("unbounded job without checkpoints: got %v\nwant %s", err, want)
	}
	idem := NewSinkOperator(&IdempotentSink{Write: func(context.Context, []any) error { return nil }})
	if err := idem.Open(&Context{Parallelism: 1, Commit: CommitNever}); err != nil {
		t.Fatalf("a sink without committer refused: %v", err)
	}
}

// ctxSink records the context its writer is given.
type ctxSink struct{ got context.Context }

func (s *ctxSink) CreateWriter(w WriterContext) (SinkWriter, error) {
	s.got = w.Context
	return preWriter{}, nil
}
func (s *ctxSink) CreateCommitter(WriterContext) (Committer, error) { return nil, nil }

// TestSinkWriterContextIsCancelled: the writer's context is the subtask's,
// so cancelling the subtask aborts a writer blocked in a query.
func TestSinkWriterContextIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sink := &ctxSink{}
	if err := NewSinkOperator(sink).Open(&Context{Parallelism: 1, Context: ctx}); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-sink.got.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the writer's context is not cancelled with the subtask's")
	}
	bg := &ctxSink{}
	if err := NewSinkOperator(bg).Open(&Context{Parallelism: 1}); err != nil || bg.got == nil {
		t.Fatalf("without a subtask context: err %v, writer context %v", err, bg.got)
	}
}

// typedNilSink fails to create its writer or committer the wrong way: a
// nil pointer inside a non-nil interface, with the error.
type typedNilSink struct{ failCommitter bool }

type nilWriter struct{ SinkWriter }

type nilCommitter struct{ Committer }

func (*nilWriter) Close() error    { panic("Close on the nil writer of a failed CreateWriter") }
func (*nilCommitter) Close() error { panic("Close on the nil committer of a failed CreateCommitter") }

func (s typedNilSink) CreateWriter(WriterContext) (SinkWriter, error) {
	if s.failCommitter {
		return (&WriteAheadSink{}).CreateWriter(WriterContext{})
	}
	var w *nilWriter
	return w, errors.New("writer: broker unreachable")
}

func (s typedNilSink) CreateCommitter(WriterContext) (Committer, error) {
	var c *nilCommitter
	return c, errors.New("committer: broker unreachable")
}

// TestSinkOpenFailureClosesCleanly: a writer or committer whose creation
// failed is not kept, so Close after the failed Open does not call into it
// (even when the sink returned a typed nil pointer) and the error stays
// the sink's.
func TestSinkOpenFailureClosesCleanly(t *testing.T) {
	for _, s := range []typedNilSink{{}, {failCommitter: true}} {
		op := NewSinkOperator(s)
		err := op.Open(&Context{Parallelism: 1, Commit: CommitAtEndOfInput})
		if err == nil || !strings.Contains(err.Error(), "broker unreachable") {
			t.Fatalf("Open = %v, want the create error", err)
		}
		if err := op.Close(); err != nil {
			t.Errorf("%+v: Close after the failed Open: %v", s, err)
		}
	}
}
