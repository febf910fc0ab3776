package kafka

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Issue 11, bug 4: the exactly-once sink committed checkpoint 2, then the
// job restored checkpoint 1 (checkpoint 2 deleted or corrupt): going on
// would write checkpoint 2's records again. The transaction of each
// checkpoint commits a marker with it, so the writer fails at open with a
// ReplayError naming both checkpoints and sink.allow-replay; with that
// option the replay is accepted; a fresh start forgets the markers.
func TestRestoreBehindCommittedCheckpoint(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	out := c.topic("out", 1)
	sink := func(extra ...SinkOption) *Sink[string] {
		s, err := NewSink[string](append([]SinkOption{Brokers(c.brokers), Topic(out), Guarantee(delivery.ExactlyOnce),
			TransactionalIDPrefix(out), TransactionTimeout(time.Minute), CheckpointInterval(time.Second)}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	wctx := func(restored event.CheckpointID) operator.WriterContext {
		return operator.WriterContext{Subtask: event.SubtaskID{Vertex: "sink"}, Parallelism: 1, Context: context.Background(),
			RestoredCheckpoint: restored}
	}
	// checkpoint writes v under checkpoint id, restored from restored, and commits it.
	checkpoint := func(s *Sink[string], restored, id event.CheckpointID, v string) {
		t.Helper()
		w, err := s.CreateWriter(wctx(restored))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := w.Write(event.Record{Value: v, Timestamp: event.NoTimestamp}); err != nil {
			t.Fatal(err)
		}
		cs, err := w.PrepareCommit(id)
		if err != nil {
			t.Fatal(err)
		}
		cm, err := s.CreateCommitter(wctx(restored))
		if err != nil {
			t.Fatal(err)
		}
		defer cm.Close()
		if err := cm.Commit(context.Background(), id, cs); err != nil {
			t.Fatal(err)
		}
	}
	opens := func(s *Sink[string], restored event.CheckpointID) error {
		w, err := s.CreateWriter(wctx(restored))
		if err == nil {
			w.Close()
		}
		return err
	}
	s := sink()
	checkpoint(s, 0, 1, "a")
	checkpoint(s, 1, 2, "b")

	err := opens(s, 1)
	var re *operator.ReplayError
	if !errors.As(err, &re) || re.Restored != 1 || re.Committed != 2 || !errors.Is(err, operator.ErrNonRestartable) ||
		!strings.Contains(err.Error(), "'sink.allow-replay' = 'true'") || !strings.Contains(err.Error(), markerGroup(out, 0)) {
		t.Fatalf("writer restored from checkpoint 1 = %v; want a non-restartable ReplayError naming checkpoints 1 and 2, the marker and sink.allow-replay", err)
	}
	if err := opens(s, 2); err != nil {
		t.Fatalf("writer restored from checkpoint 2 (the last committed): %v", err)
	}
	checkpoint(sink(AllowReplay()), 1, 3, "b") // checkpoint 2's record, replayed
	if got := strings.Join(values(c.readCommitted(out)), " "); got != "a b b" {
		t.Errorf("committed records after the accepted replay %q, want \"a b b\"", got)
	}
	if err := opens(s, 2); err == nil {
		t.Error("writer restored from checkpoint 2 after checkpoint 3 committed: no error")
	}
	if err := opens(s, 0); err != nil { // a fresh start forgets what was committed
		t.Fatal(err)
	}
	if err := opens(s, 1); err != nil {
		t.Errorf("writer restored from checkpoint 1 after a fresh start: %v", err)
	}
}
