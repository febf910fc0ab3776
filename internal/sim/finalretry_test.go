package sim

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
)

// flakyWriteOp's snapshot parts fail to encode the first `fail` times:
// the asynchronous phase declines, so the checkpoint is aborted.
type flakyWriteOp struct {
	operator.Base
	fail *atomic.Int32
}

func (f *flakyWriteOp) ProcessElement(r event.Record) error {
	f.Ctx.Output.Collect(r)
	return nil
}

func (f *flakyWriteOp) SnapshotState(event.CheckpointID) ([]operator.Part, error) {
	return []operator.Part{{Name: "flaky", Snap: flakySnap{f.fail}}}, nil
}

type flakySnap struct{ fail *atomic.Int32 }

func (s flakySnap) Write() ([]byte, error) {
	if s.fail.Add(-1) >= 0 {
		return nil, errors.New("disk full (injected)")
	}
	return []byte("ok"), nil
}

// A declined final checkpoint is triggered again; the job still ends with
// every record committed exactly once.
func TestFinalCheckpointRetriedAfterDecline(t *testing.T) {
	var fail atomic.Int32
	fail.Store(2)
	store := NewStore()
	src := &SeqSource{Keys: 4, PerKey: 50, Splits: 2, Burst: 100, Pause: time.Millisecond}
	g := &graph.StreamGraph{JobName: "final-retry"}
	s := g.AddNode(&graph.Node{Name: "Source: seq", UID: "seq", Parallelism: 1, Source: src})
	f := g.AddNode(&graph.Node{Name: "Flaky", UID: "flaky", Parallelism: 1,
		NewOperator: func() operator.Operator { return &flakyWriteOp{fail: &fail} }})
	k := g.AddNode(&graph.Node{Name: "Sink: tx", UID: "sink", Parallelism: 1,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(&TxSink{Store: store}) }})
	g.Connect(&graph.Edge{From: s.ID, To: f.ID})
	g.Connect(&graph.Edge{From: f.ID, To: k.ID})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	var failed []int64
	opts := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: t.TempDir(), Restart: runtime.NoRestart{},
		Listener: func(e runtime.Event) {
			if e.Kind == runtime.EventCheckpointFailed {
				failed = append(failed, e.Checkpoint)
			}
		}}
	opts.Checkpoint.TolerableFailures = -1 // interval 0: only final checkpoints
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 2 {
		t.Fatalf("failed checkpoints %v, want two declined final checkpoints", failed)
	}
	if got := len(store.Committed()); got != 200 {
		t.Fatalf("committed %d records, want 200", got)
	}
	if res.Restarts != 0 {
		t.Fatalf("%d restarts; a declined checkpoint must not fail the job", res.Restarts)
	}
}
