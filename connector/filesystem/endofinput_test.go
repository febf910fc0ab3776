package filesystem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/types"
)

// lagGate makes the sink's second input lag behind the final checkpoint:
// subtask 1 holds its first row until subtask 0, its input ended, has
// snapshotted, so the final checkpoint's barrier is then already in the
// sink's inbox behind subtask 0's end of input.
type lagGate struct {
	once sync.Once
	past chan struct{} // closed when subtask 0 snapshotted after its Finish
}

type lagOp struct {
	operator.Base
	g        *lagGate
	finished bool // subtask 0's Finish ran
	held     bool // subtask 1 held its first row
}

func (o *lagOp) ProcessElement(r event.Record) error {
	if o.Ctx.Subtask.Index == 1 && !o.held {
		o.held = true
		select {
		case <-o.g.past:
		case <-time.After(20 * time.Second): // a failure guard, not a timing assertion
			return errors.New("the final checkpoint never passed Lag (0)")
		}
	}
	o.Ctx.Output.Collect(r)
	return nil
}

func (o *lagOp) Finish() error {
	o.finished = true
	return nil
}

func (o *lagOp) SnapshotState(event.CheckpointID) ([]operator.Part, error) {
	if o.Ctx.Subtask.Index == 0 && o.finished {
		o.g.once.Do(func() { close(o.g.past) })
	}
	return nil, nil
}

// TestEndOfInputCommitsPartitionsOfLaggingInput: the sink's input 0 ends
// and delivers the final checkpoint's barrier while input 1 still sends a
// row, then ends. The sink must commit every partition in the final
// checkpoint (each gets its _SUCCESS) — before the fix the sink's chain
// finished only after the snapshot that this last end of input completed,
// so no partition committed (TestPartitionedParquetExactlyOnce lost
// _SUCCESS files 1 run in 20-30 on a loaded machine this way).
//
// Deterministic: the barrier reaches the sink's inbox before Lag (1) sends
// its row (one batch, BatchSize 1) and then its end of input, and the sink
// takes its channels in turn, so it handles the barrier before that end.
func TestEndOfInputCommitsPartitionsOfLaggingInput(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	fields := []types.Field{{Name: "id", Type: types.Type{Kind: types.BigInt}}, {Name: "dt", Type: types.Type{Kind: types.String}}}
	days := []string{"2024-01-01", "2024-01-02", "2024-01-03"}
	for f := range 2 {
		var lines []string
		for i := range 4 {
			id := f*4 + i
			lines = append(lines, fmt.Sprintf("%d,%s", id, days[id%len(days)]))
		}
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d.csv", f)), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gate := &lagGate{past: make(chan struct{})}
	g := &graph.StreamGraph{JobName: "lag"}
	s := g.AddNode(&graph.Node{Name: "Source: files", UID: "src", Parallelism: 2,
		Source: &Source{Path: in, Format: &format.CSV{Fields: fields, Delimiter: ','}}})
	l := g.AddNode(&graph.Node{Name: "Lag", UID: "lag", Parallelism: 2,
		NewOperator: func() operator.Operator { return &lagOp{g: gate} }})
	commit := &CommitPolicy{Trigger: TriggerProcessTime, Delay: time.Hour, SuccessFile: "_SUCCESS"}
	k := g.AddNode(&graph.Node{Name: "Sink: files", UID: "sink", Parallelism: 1,
		NewOperator: func() operator.Operator {
			return operator.NewSinkOperator(&Sink{Dir: out, Format: &format.CSV{Fields: fields[:1], Delimiter: ','},
				PartitionCols: []string{"dt"}, PartitionIdx: []int{1}, Commit: commit})
		}})
	g.Connect(&graph.Edge{From: s.ID, To: l.ID, Partitioning: graph.Rebalance})
	g.Connect(&graph.Edge{From: l.ID, To: k.ID, Partitioning: graph.Rebalance})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	// Only the final checkpoint: partitions are due in an hour, so the end
	// of input alone commits them. Credits to spare: no send waits, so Lag
	// (0)'s barrier is in the sink's inbox when its snapshot runs.
	opts := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: t.TempDir(), Restart: runtime.NoRestart{},
		BatchSize: 1, ChannelCredits: 32}
	opts.Checkpoint.Interval = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := runtime.Run(ctx, jg, opts); err != nil {
		t.Fatal(err)
	}
	var committed []string
	for _, d := range days {
		if _, err := os.Stat(filepath.Join(out, "dt="+d, "_SUCCESS")); err == nil {
			committed = append(committed, d)
		}
	}
	if !slices.Equal(committed, days) {
		t.Errorf("partitions with _SUCCESS %v, want %v", committed, days)
	}
}
