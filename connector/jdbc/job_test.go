package jdbc

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/task"
)

// sumOp keeps a running total of the sequence numbers per key and emits
// +I[key, seq, total] for every element: deterministic output, whatever
// the restarts, when state and input agree (exactly-once state).
type sumOp struct {
	operator.Base
	total state.ValueState[int64]
}

func (o *sumOp) Open(ctx *operator.Context) error {
	if err := o.Base.Open(ctx); err != nil {
		return err
	}
	o.total = state.Value(ctx.Keyed, state.ValueDescriptor[int64]{Name: "total"})
	return nil
}

func (o *sumOp) ProcessElement(r event.Record) error {
	o.Ctx.SetCurrentKeyOf(r.Value)
	q := r.Value.(sim.Seq)
	sum, _ := o.total.Value()
	sum += int64(q.Seq)
	o.total.Update(sum)
	o.Ctx.Output.Collect(event.Record{Value: event.Row{Kind: event.Insert,
		Fields: []any{q.Key, q.Seq, sum}}, Timestamp: r.Timestamp})
	return nil
}

// jobGraph: SeqSource (p=2) → CrashOp (crashes in process, snapshot,
// notify, restore) → keyBy → sumOp → JDBC sink (p=2, chained).
func jobGraph(src *sim.SeqSource, f *sim.Faults, sink operator.Sink) *graph.StreamGraph {
	g := &graph.StreamGraph{JobName: "jdbc"}
	s := g.AddNode(&graph.Node{Name: "Source: seq", UID: "seq", Parallelism: 2, Source: src})
	c := g.AddNode(&graph.Node{Name: "Crash", UID: "crash", Parallelism: 2,
		NewOperator: func() operator.Operator { return &sim.CrashOp{Faults: f, SlowSubtask: -1} }})
	key := func(x any) any { return x.(sim.Seq).Key }
	m := g.AddNode(&graph.Node{Name: "Sum", UID: "sum", Parallelism: 2, KeySelector: key,
		NewOperator: func() operator.Operator { return &sumOp{} }})
	o := g.AddNode(&graph.Node{Name: "Sink: jdbc", UID: "sink", Parallelism: 2,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(sink) }})
	g.Connect(&graph.Edge{From: s.ID, To: c.ID})
	g.Connect(&graph.Edge{From: c.ID, To: m.ID, Partitioning: graph.Hash, Key: key})
	g.Connect(&graph.Edge{From: m.ID, To: o.ID})
	return g
}

// killer kills the sink's connection from another session the n-th time
// the sink reports it at point, once; when that connection has already
// closed (its job restarting) it kills at the next report instead.
type killer struct {
	db     *testDB
	t      testing.TB
	point  string
	n      int64
	calls  atomic.Int64
	killed atomic.Bool
	mu     sync.Mutex
}

func (k *killer) hook(point string, connID int64) {
	if point != k.point || k.calls.Add(1) < k.n || k.killed.Load() {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.killed.Load() {
		return
	}
	gone, err := k.db.kill(connID)
	switch {
	case err != nil:
		k.t.Errorf("killing connection %d at %s: %v", connID, point, err)
		k.killed.Store(true) // reported; do not try again
	case gone:
		k.t.Logf("connection %d at %s closed before the kill; killing at the next report", connID, point)
	default:
		k.killed.Store(true)
	}
}

type jobCase struct {
	name   string
	keyed  bool // table with PRIMARY KEY (k): one row per key
	opts   []Opt
	killAt string
	twoPC  bool // has a commit phase: the sink's crash points are reached
}

const jobKeys, jobPerKey = 6, 200

// sinkCrashes crashes the sink at fixed occurrences of its points: the
// second commit (after PREPARE, before COMMIT), the third prepare (after
// PREPARE, before the checkpoint has the xid) and the fourth after-commit.
type sinkCrashes struct {
	mu    sync.Mutex
	calls map[string]int
	fired []string
}

func (c *sinkCrashes) maybe(point string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls[point]++
	if c.calls[point] == map[string]int{"commit": 2, "prepare": 3, "after-commit": 4}[point] {
		c.fired = append(c.fired, point)
		return fmt.Errorf("%w at sink %s", sim.ErrInjected, point)
	}
	return nil
}

// TestJobExactlyOnceWithFailures runs a keyed job into each kind of sink on
// both databases while crashes hit the map operator and the source (random,
// seeded) and the sink (after a prepare, between PREPARE and COMMIT, after
// a commit), and the sink's connection is killed mid-transaction from
// another session. The table must end exactly equal to the expectation
// computed from the source's definition, with no prepared transaction left.
func TestJobExactlyOnceWithFailures(t *testing.T) {
	cases := []jobCase{
		{name: "xa-append", opts: []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA)}, killAt: "xa-write", twoPC: true},
		{name: "xa-upsert", keyed: true, opts: []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyXA)}, killAt: "xa-write", twoPC: true},
		{name: "checkpoint-table-append", opts: []Opt{Guarantee(delivery.ExactlyOnce), ExactlyOnceStrategy(StrategyCheckpointTable)}, killAt: "wal-apply", twoPC: true},
		{name: "checkpoint-table-upsert", keyed: true, opts: []Opt{Guarantee(delivery.ExactlyOnce)}, killAt: "wal-apply", twoPC: true},
		{name: "at-least-once-upsert", keyed: true, opts: []Opt{Guarantee(delivery.AtLeastOnce)}, killAt: "flush"},
	}
	eachDB(t, func(t *testing.T, db *testDB) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) { runJobCase(t, db, c, int64(i+1)) })
		}
	})
}

func runJobCase(t *testing.T, db *testDB, c jobCase, seed int64) {
	ddl := "k INT NOT NULL, seq INT NOT NULL, total BIGINT NOT NULL"
	if c.keyed {
		ddl = "k INT NOT NULL PRIMARY KEY, seq INT NOT NULL, total BIGINT NOT NULL"
	}
	tbl := db.table(t, "job", ddl)
	job := db.job(t)
	f := sim.NewFaults(seed, 3, map[string]float64{"process": 0.003, "snapshot": 0.05, "notify": 0.05, "restore": 0.1})
	sc := &sinkCrashes{calls: map[string]int{}}
	k := &killer{db: db, t: t, point: c.killAt, n: 4}
	sink := db.newSink(t, tbl, append([]Opt{BufferFlush(20, 0)}, c.opts...)...)
	sink.hooks = hooks{fault: sc.maybe, conn: k.hook}
	src := &sim.SeqSource{Keys: jobKeys, PerKey: jobPerKey, Splits: 3, Burst: 10, Pause: 2 * time.Millisecond, Faults: f}
	jg, err := jobGraph(src, f, sink).JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	opts := runtime.Options{JobID: job, Mode: task.ExactlyOnce, CheckpointDir: t.TempDir(),
		Restart: runtime.FixedDelay{Attempts: 30, Delay: 10 * time.Millisecond}}
	opts.Checkpoint.Interval = 15 * time.Millisecond
	opts.Checkpoint.TolerableFailures = -1
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		t.Fatalf("job failed: %v (crashes: %v, sink crashes: %v)", err, f.Fired, sc.fired)
	}
	equal(t, "table", db.rows(t, tbl), expectedRows(c.keyed))
	if left := db.prepared(t, "weir:"+job+":"); len(left) != 0 {
		t.Errorf("prepared transactions left behind: %v", left)
	}
	if f.Count() < 2 {
		t.Errorf("only %d operator crashes injected (%v); want at least 2", f.Count(), f.Fired)
	}
	if c.twoPC && len(sc.fired) < 2 {
		t.Errorf("sink crashes %v; want at least commit and prepare", sc.fired)
	}
	if !k.killed.Load() {
		t.Errorf("the connection was never killed at %s", c.killAt)
	}
	t.Logf("restarts %d, operator crashes %v, sink crashes %v, checkpoints in last attempt %d",
		res.Restarts, f.Fired, sc.fired, len(res.Checkpoints))
}

// expectedRows is computed from the source's definition alone.
func expectedRows(keyed bool) []string {
	var out []string
	for k := 0; k < jobKeys; k++ {
		total := 0
		for q := 0; q < jobPerKey; q++ {
			total += q
			if !keyed || q == jobPerKey-1 {
				out = append(out, fmt.Sprintf("%d|%d|%d", k, q, total))
			}
		}
	}
	return sortStrings(out)
}
