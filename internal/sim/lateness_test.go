package sim

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/operator/window"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/watermark"
)

// listSink collects every record it is given (at-least-once, no commit).
type listSink struct {
	mu  sync.Mutex
	out []event.Record
}

func (l *listSink) CreateWriter(operator.WriterContext) (operator.SinkWriter, error) {
	return listWriter{l}, nil
}
func (l *listSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type listWriter struct{ l *listSink }

func (w listWriter) Write(r event.Record) error {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	w.l.out = append(w.l.out, r)
	return nil
}
func (listWriter) Flush(bool) error                                   { return nil }
func (listWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (listWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (listWriter) Close() error                                       { return nil }

// Scenario 11: a far-future timestamp does not drag the watermark (later
// on-time records are not late), and records that really are late are
// counted and reach the late-data side output.
func TestFutureSkewAndLateData(t *testing.T) {
	future := time.Now().Add(365 * 24 * time.Hour).UnixMilli()
	step := func(ts []int64, pause time.Duration) ScriptStep {
		vals := make([]any, len(ts))
		for i, x := range ts {
			vals[i] = x
		}
		return ScriptStep{Values: vals, TS: ts, Pause: pause}
	}
	wait := 150 * time.Millisecond // 15 watermark intervals: each step's watermark is out before the next step
	src := &ScriptSource{Steps: []ScriptStep{
		step([]int64{100, 200, 1100, 1500, 2100}, wait), // watermark → 2099: windows [0,1000) and [1000,2000) fire
		step([]int64{future}, wait),                     // must not advance the watermark
		step([]int64{2200, 2300}, wait),                 // on time (would be late if the watermark had jumped)
		step([]int64{300, 1200}, wait),                  // late: their windows fired
	}}
	strategy := watermark.Strategy{MaxFutureSkew: time.Hour}
	sum := func(a, b any) any { return a.(int64) + b.(int64) }
	g := &graph.StreamGraph{JobName: "late"}
	s := g.AddNode(&graph.Node{Name: "Source: script", UID: "script", Parallelism: 1, Source: src, Watermarks: &strategy,
		WatermarkInterval: 10 * time.Millisecond})
	key := func(any) any { return "all" }
	w := g.AddNode(&graph.Node{Name: "Window", UID: "window", Parallelism: 1, KeySelector: key,
		NewOperator: func() operator.Operator {
			op, err := window.New(window.Options{Assigner: window.Tumbling{Size: time.Second}, Reduce: sum,
				LateTag: "late", Codec: state.AnyCodec{}})
			if err != nil {
				t.Fatal(err)
			}
			return op
		}})
	main, late := &listSink{}, &listSink{}
	m := g.AddNode(&graph.Node{Name: "Sink: main", UID: "main", Parallelism: 1,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(main) }})
	l := g.AddNode(&graph.Node{Name: "Sink: late", UID: "late", Parallelism: 1,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(late) }})
	g.Connect(&graph.Edge{From: s.ID, To: w.ID, Partitioning: graph.Hash, Key: key})
	g.Connect(&graph.Edge{From: w.ID, To: m.ID})
	g.Connect(&graph.Edge{From: w.ID, To: l.ID, SideTag: "late"})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := runtime.Run(ctx, jg, runtime.Options{Mode: task.AtMostOnce, Restart: runtime.NoRestart{}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{} // window end-1 → sum
	for _, r := range main.out {
		got[r.Timestamp] = r.Value.(int64)
	}
	want := map[int64]int64{999: 300, 1999: 2600, 2999: 2100 + 2200 + 2300, future - future%1000 + 999: future}
	if len(got) != len(want) {
		t.Fatalf("window results %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("window ending %d: sum %d, want %d (all results %v)", k+1, got[k], v, got)
		}
	}
	var lateTS []int64
	for _, r := range late.out {
		lateTS = append(lateTS, r.Timestamp)
	}
	sort.Slice(lateTS, func(i, j int) bool { return lateTS[i] < lateTS[j] })
	if len(lateTS) != 2 || lateTS[0] != 300 || lateTS[1] != 1200 {
		t.Errorf("late side output %v, want [300 1200]", lateTS)
	}
	if n := res.Metrics["window"].LateSide; n != 2 {
		t.Errorf("late records counted %d, want 2", n)
	}
	if n := res.Metrics["script"].FutureSkewed; n != 1 {
		t.Errorf("future-skewed records counted %d, want 1", n)
	}
}
