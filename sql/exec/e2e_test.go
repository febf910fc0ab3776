package exec

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/internal/sim"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/task"
	"github.com/weirstream/weir/watermark"
)

// scriptOf plays rows as a ScriptSource, a few per step with pauses, so
// checkpoints fall mid-stream; ts gives each row's event time.
func scriptOf(rows []event.Row, ts func(event.Row) int64) *sim.ScriptSource {
	src := &sim.ScriptSource{}
	for i := 0; i < len(rows); i += 10 {
		st := sim.ScriptStep{Pause: 2 * time.Millisecond}
		for _, r := range rows[i:min(i+10, len(rows))] {
			st.Values = append(st.Values, r)
			st.TS = append(st.TS, ts(r))
		}
		src.Steps = append(src.Steps, st)
	}
	return src
}

func noTS(event.Row) int64 { return event.NoTimestamp }

// fresh makes a new operator per call: the runtime asks for one per
// subtask and attempt.
func fresh[T operator.Operator](mk func() (T, error)) func() operator.Operator {
	return func() operator.Operator {
		op, err := mk()
		if err != nil {
			panic(err)
		}
		return op
	}
}

// hashEdge connects from → to keyed by k, into input (0 or 1).
func hashEdge(g *graph.StreamGraph, from, to *graph.Node, k KeyFunc, input int) {
	g.Connect(&graph.Edge{From: from.ID, To: to.ID, Partitioning: graph.Hash, Key: k.Selector(), Input: input})
}

func runGraph(t *testing.T, g *graph.StreamGraph, restarts int) *runtime.Result {
	t.Helper()
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	opts := runtime.Options{Mode: task.ExactlyOnce, CheckpointDir: t.TempDir(),
		Restart: runtime.FixedDelay{Attempts: restarts, Delay: 0}}
	opts.Checkpoint.Interval = 5 * time.Millisecond
	opts.Checkpoint.TolerableFailures = -1
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := runtime.Run(ctx, jg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestEndToEndAggregateJoinExactlyOnce runs
//
//	SELECT u.id, u.name, a.id, a.n, a.total, a.biggest
//	FROM users u LEFT JOIN (
//	  SELECT id, COUNT(*) n, SUM(amount) total, MAX(amount) biggest
//	  FROM orders WHERE amount > 0 GROUP BY id) a ON u.id = a.id
//
// over an orders changelog (inserts, deletes, updates) through the real
// runtime — parallel subtasks, hash exchanges, checkpoints, a crash and a
// restore — into an exactly-once sink, and compares the committed
// changelog, materialised, with the result computed directly.
func TestEndToEndAggregateJoinExactlyOnce(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	users := 12
	orders := changelog(rng, 600, func() []any {
		cents := int64(rng.Intn(2000) - 100)
		return []any{fmt.Sprint("u", rng.Intn(users+3)), decimal.New(cents, -2)}
	})
	var people []event.Row
	for i := range users {
		people = append(people, event.Row{Kind: event.Insert, Fields: []any{fmt.Sprint("u", i), fmt.Sprint("name", i)}})
	}

	agg := GroupAggOptions{GroupKeys: []int{0}, Aggs: []AggCall{{Kind: CountStar},
		{Kind: Sum, Arg: 1}, {Kind: Max, Arg: 1}}}
	join := JoinOptions{Type: LeftJoin, LeftKeys: []int{0}, RightKeys: []int{0}, LeftArity: 2, RightArity: 4}
	positive := func(f []any) (bool, error) { return f[1].(decimal.Decimal).IsPositive(), nil }

	faults := sim.NewPlan(sim.Crash("process", 350))
	store := sim.NewStore()
	g := &graph.StreamGraph{JobName: "sql-e2e"}
	src := g.AddNode(&graph.Node{Name: "Source: orders", UID: "orders", Parallelism: 1, Source: scriptOf(orders, noTS)})
	crash := g.AddNode(&graph.Node{Name: "Crash", UID: "crash", Parallelism: 1,
		NewOperator: func() operator.Operator { return &sim.CrashOp{Faults: faults, SlowSubtask: -1} }})
	calc := g.AddNode(&graph.Node{Name: "Calc", UID: "calc", Parallelism: 1,
		NewOperator: func() operator.Operator { return &Calc{Filter: positive} }})
	ga := g.AddNode(&graph.Node{Name: "GroupAggregate", UID: "agg", Parallelism: 2, KeySelector: agg.Key().Selector(),
		NewOperator: fresh(func() (*GroupAggregate, error) { return NewGroupAggregate(agg) })})
	usersSrc := g.AddNode(&graph.Node{Name: "Source: users", UID: "users", Parallelism: 1, Source: scriptOf(people, noTS)})
	j := g.AddNode(&graph.Node{Name: "Join", UID: "join", Parallelism: 3, KeySelector: join.LeftKey().Selector(),
		NewOperator: fresh(func() (*Join, error) { return NewJoin(join) })})
	sink := g.AddNode(&graph.Node{Name: "Sink: tx", UID: "sink", Parallelism: 3,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(&sim.TxSink{Store: store}) }})
	g.Connect(&graph.Edge{From: src.ID, To: crash.ID})
	g.Connect(&graph.Edge{From: crash.ID, To: calc.ID})
	hashEdge(g, calc, ga, agg.Key(), 0)
	hashEdge(g, usersSrc, j, join.LeftKey(), 0)
	hashEdge(g, ga, j, join.RightKey(), 1)
	g.Connect(&graph.Edge{From: j.ID, To: sink.ID})

	res := runGraph(t, g, 3)
	if res.Restarts < 1 || !faults.PlanDone() {
		t.Fatalf("the crash did not happen: %d restarts, plan %s", res.Restarts, faults.PlanState())
	}
	var out []event.Row
	for _, v := range store.Committed() {
		out = append(out, v.(event.Row))
	}
	tab, err := Materialize(out, nil)
	if err != nil {
		t.Fatalf("the committed changelog is inconsistent: %v", err)
	}

	// The same query, computed directly from the final tables.
	totals := map[string][]any{}
	for _, o := range final(orders) {
		id, amount := o[0].(string), o[1].(decimal.Decimal)
		if !amount.IsPositive() {
			continue
		}
		if a, ok := totals[id]; !ok {
			totals[id] = []any{id, int64(1), amount, amount}
		} else {
			totals[id] = []any{id, a[1].(int64) + 1, a[2].(decimal.Decimal).Add(amount), decimal.Max(a[3].(decimal.Decimal), amount)}
		}
	}
	var want [][]any
	for _, p := range people {
		if a, ok := totals[p.Fields[0].(string)]; ok {
			want = append(want, concat(p.Fields, a))
		} else {
			want = append(want, concat(p.Fields, nulls(4)))
		}
	}
	if got, w := sortedTable(tab), sortedLines(want); !slices.Equal(got, w) {
		t.Fatalf("committed table (%d rows after %d changes)\n%s\nwant\n%s", len(got), len(out),
			strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
	t.Logf("%d order changes → %d committed output changes, %d restarts", len(orders), len(out), res.Restarts)
}

// TestEndToEndTumblingWindow: an hourly-style tumbling count through the
// runtime, with watermarks from the source and a crash: only +I rows, one
// per window and key, equal to the counts computed directly.
func TestEndToEndTumblingWindow(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var rows []event.Row
	want := map[string]int64{}
	for i := range 400 {
		ts := int64(i*5 + rng.Intn(3)) // ascending per split: nothing late
		k := fmt.Sprint("k", rng.Intn(4))
		rows = append(rows, event.Row{Kind: event.Insert, Fields: []any{k, millisTime(ts)}})
		want[fmt.Sprint(k, " ", ts/100*100)]++
	}
	opts := WindowAggOptions{Window: WindowSpec{Kind: Tumble, Size: 100 * time.Millisecond}, TimeField: 1,
		GroupKeys: []int{0}, Aggs: []AggCall{{Kind: CountStar}}}
	store := sim.NewStore()
	strategy := watermark.Strategy{}
	g := &graph.StreamGraph{JobName: "sql-window"}
	src := g.AddNode(&graph.Node{Name: "Source: events", UID: "events", Parallelism: 1, Watermarks: &strategy,
		WatermarkInterval: time.Millisecond,
		Source:            scriptOf(rows, func(r event.Row) int64 { return r.Fields[1].(time.Time).UnixMilli() })})
	w := g.AddNode(&graph.Node{Name: "WindowAggregate", UID: "window", Parallelism: 2, KeySelector: opts.Key().Selector(),
		NewOperator: fresh(func() (*WindowAggregate, error) { return NewWindowAggregate(opts) })})
	sink := g.AddNode(&graph.Node{Name: "Sink: tx", UID: "sink", Parallelism: 2,
		NewOperator: func() operator.Operator { return operator.NewSinkOperator(&sim.TxSink{Store: store}) }})
	faults := sim.NewPlan(sim.Crash("process", 250))
	crash := g.AddNode(&graph.Node{Name: "Crash", UID: "crash", Parallelism: 1,
		NewOperator: func() operator.Operator { return &sim.CrashOp{Faults: faults, SlowSubtask: -1} }})
	g.Connect(&graph.Edge{From: src.ID, To: crash.ID})
	hashEdge(g, crash, w, opts.Key(), 0)
	g.Connect(&graph.Edge{From: w.ID, To: sink.ID})
	res := runGraph(t, g, 3)
	if res.Restarts < 1 {
		t.Fatalf("the crash did not happen: plan %s", faults.PlanState())
	}

	got := map[string]int64{}
	for _, v := range store.Committed() {
		r := v.(event.Row)
		if r.Kind != event.Insert {
			t.Fatalf("window output %s is not an insert", formatRow(r))
		}
		k := fmt.Sprint(r.Fields[0], " ", r.Fields[1].(time.Time).UnixMilli())
		if got[k] != 0 {
			t.Fatalf("window %s fired twice", k)
		}
		got[k] = r.Fields[3].(int64)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("window counts\n%v\nwant\n%v", got, want)
	}
	if m := res.Metrics["window"]; m.LateDropped != 0 {
		t.Fatalf("%d rows dropped as late", m.LateDropped)
	}
}
