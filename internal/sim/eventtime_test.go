package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/watermark"
)

// timerGraph: Source "seq" (srcPar, watermarks) → keyBy → KeyedProcess
// "timers" running fn (par) → sink (chained).
func timerGraph(t *testing.T, src operator.Source, srcPar, par int, ts operator.TimestampAssigner,
	fn operator.KeyedProcessFunction, sink func() operator.Operator) *graph.JobGraph {
	t.Helper()
	g := &graph.StreamGraph{JobName: "timers"}
	s := g.AddNode(&graph.Node{Name: "Source: seq", UID: "seq", Parallelism: srcPar, Source: src,
		Watermarks: &watermark.Strategy{}, Timestamps: ts})
	key := func(x any) any { return x.(Seq).Key }
	p := g.AddNode(&graph.Node{Name: "Timers", UID: "timers", Parallelism: par, KeySelector: key,
		NewOperator: func() operator.Operator { return &operator.KeyedProcess{Fn: fn} }})
	o := g.AddNode(&graph.Node{Name: "Sink", UID: "sink", Parallelism: par, NewOperator: sink})
	g.Connect(&graph.Edge{From: s.ID, To: p.ID, Partitioning: graph.Hash, Key: key})
	g.Connect(&graph.Edge{From: p.ID, To: o.ID})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	return jg
}

// Scenario 6: an idle source subtask blocks neither watermarks nor
// checkpoints. Three source subtasks share one split: two never read
// anything, so they have no watermark of their own and must be left out
// of the minimum downstream. The source is unbounded: it never sends the
// end-of-input maximum watermark, so every timer that fires was fired by a
// real watermark. Timestamps rise along the single split, (key·perKey +
// seq)·10, and the watermark reaches the last one minus 1 ms: every timer
// but the last element's fires, once, while checkpoints keep completing.
func TestIdleSourceSubtaskBlocksNothing(t *testing.T) {
	const keys, perKey = 4, 100
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: 1, Burst: 10, Pause: time.Millisecond, Unbounded: true}
	stamp := func(v any) event.Timestamp { q := v.(Seq); return int64(q.Key*perKey+q.Seq) * 10 }
	out := &Collected{}
	jg := timerGraph(t, src, 3, 2, stamp, &TimerFn{},
		func() operator.Operator { return &CollectOp{Out: out} })
	ev := &events{}
	opts := testOptions(t.TempDir(), 10*time.Millisecond)
	opts.Restart = runtime.NoRestart{}
	opts.Listener = ev.listener(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := runJob(ctx, jg, opts); done <- err }()

	want := keys*perKey - 1
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("timed out waiting for %s: %d timers fired, events: %s (job: %v)", what, out.Len(), ev, <-done)
			}
		}
	}
	waitFor("the timers", func() bool { return out.Len() >= want })
	n0 := len(ev.of(runtime.EventCheckpointCompleted))
	waitFor("two more checkpoints", func() bool { return len(ev.of(runtime.EventCheckpointCompleted)) >= n0+2 })
	time.Sleep(450 * time.Millisecond) // two more watermark intervals: nothing else may fire
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("job ended with %v, want cancellation; events: %s", err, ev)
	}
	if f := ev.of(runtime.EventFailover); len(f) != 0 {
		t.Fatalf("failovers: %v", f)
	}
	fired := multiset[Fired](out.Values())
	expect := map[Fired]int{}
	for k := 0; k < keys; k++ {
		for q := 0; q < perKey; q++ {
			if ts := int64(k*perKey+q) * 10; !(k == keys-1 && q == perKey-1) {
				expect[Fired{k, ts}] = 1
			}
		}
	}
	if d := diffMultisets(fired, expect); d != "" {
		t.Errorf("fired timers differ from every timer below the watermark, once each: %s", d)
	}
	checkPerKeyOrder(t, out.Values())
}

// checkPerKeyOrder checks that each key's firings come in increasing time.
func checkPerKeyOrder(t *testing.T, vs []any) {
	t.Helper()
	last := map[int]int64{}
	for _, v := range vs {
		f := v.(Fired)
		if prev, ok := last[f.Key]; ok && f.Ts <= prev {
			t.Errorf("key %d: timer %d came after %d", f.Key, f.Ts, prev)
			return
		}
		last[f.Key] = f.Ts
	}
}

// Scenario 7: event-time timers on several keys fire once each, in order,
// after a restore. One key per split, so each split's event time rises;
// crashes while timers fire (one per attempt) make the job restore twice
// from checkpoints that hold pending timers. In the committed output each
// (key, time) appears exactly once, and each key's in increasing time.
func TestTimersFireOnceInOrderAfterRestore(t *testing.T) {
	const keys, perKey = 6, 250
	f := NewPlan(
		Crash("timer", 100),
		After("open", 1), // attempt 2 opens
		Crash("timer", 300),
		After("open", 1),
	)
	store := NewStore()
	src := &SeqSource{Keys: keys, PerKey: perKey, Splits: keys, Burst: 2, Pause: 2 * time.Millisecond}
	jg := timerGraph(t, src, 2, 2, nil, &TimerFn{Faults: f},
		func() operator.Operator { return operator.NewSinkOperator(&TxSink{Store: store}) })
	dir, ev := t.TempDir(), &events{}
	opts := testOptions(dir, 10*time.Millisecond)
	opts.Retained = 1000 // keep the restored checkpoints, to look into them
	opts.Listener = ev.listener(nil)
	res, err := runJob(context.Background(), jg, opts)
	if err != nil {
		t.Fatalf("job failed: %v (plan %s)", err, f.PlanState())
	}
	if !f.PlanDone() || res.Restarts != 2 {
		t.Fatalf("plan %s, %d restarts; want both crashes", f.PlanState(), res.Restarts)
	}
	restored := ev.ids(runtime.EventRestored)
	if len(restored) != 2 {
		t.Fatalf("restored %v, want two restores; events: %s", restored, ev)
	}
	for _, id := range restored {
		if n := pendingTimers(t, dir, event.CheckpointID(id)); n == 0 {
			t.Errorf("restored checkpoint %d holds no pending timer; the restore tests nothing", id)
		}
	}
	got := store.Committed()
	expect := map[Fired]int{}
	for k := 0; k < keys; k++ {
		for q := 0; q < perKey; q++ {
			expect[Fired{k, int64(q) * 10}] = 1
		}
	}
	if d := diffMultisets(multiset[Fired](got), expect); d != "" {
		t.Errorf("committed timer output is not every (key, time) exactly once: %s", d)
	}
	checkPerKeyOrder(t, got)
	if l := store.Lingering(); len(l) != 0 {
		t.Errorf("lingering transactions: %v", l)
	}
	t.Logf("events: %s", ev)
}

// pendingTimers counts the timers in the "timers" operator's snapshot of
// checkpoint id (a timer snapshot starts with its count).
func pendingTimers(t *testing.T, dir string, id event.CheckpointID) int {
	t.Helper()
	s, err := checkpointstorage.OpenFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.ReadMetadata(id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for key, blob := range m.Tasks {
		ts, err := task.DecodeTaskState(blob)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := ts.Operators["timers"][operator.PartTimers]
		if !ok {
			continue
		}
		b, err := s.ReadState(h)
		if err != nil {
			t.Fatal(err)
		}
		c, k := binary.Uvarint(b)
		if k <= 0 {
			t.Fatal(fmt.Errorf("%s: corrupt timer snapshot", key))
		}
		n += int(c)
	}
	return n
}
